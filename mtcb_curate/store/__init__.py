"""The workspace (decisions, edits, history, added pairs, marks, cache) and the review session over it."""
