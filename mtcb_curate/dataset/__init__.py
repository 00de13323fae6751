"""The data: the model of a dataset (documents + QA pairs), dataset profiles, loading sources, MTCB's token windows, the question-form rules (``question_form``)."""
