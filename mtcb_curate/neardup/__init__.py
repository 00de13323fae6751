"""Near-duplicate questions: similarity, blocking and clusters."""
