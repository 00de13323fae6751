"""The application layer: the workflows both front ends (cli/, tui/) run, each once."""
