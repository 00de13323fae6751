"""The pre-publish checklist: each check, the gate, and the question-form rules it shares with generation."""
