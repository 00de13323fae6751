"""Hand-written pairs: the curator selects a span of a document as the passage and types a
question and an answer; the pair is added to the workspace like a generated one (undecided,
undoable, in the history with ``via`` ``hand``) and its chunk_index is the MTCB window holding
the span."""

from __future__ import annotations

from mtcb_curate.dataset.model import Via
from mtcb_curate.errors import CurateError
from mtcb_curate.store.session import ReviewSession


def add_hand_pair(session: ReviewSession, doc_key: str, start: int, end: int, question: str,
                  answer: str) -> int:
    """Add the pair the curator wrote; returns its id (the next free one). The passage is
    ``document.text[start:end]``, verbatim by construction; chunk_index is the first MTCB window
    (8,192 tokens, 512 overlap) holding the whole span, None when no single window does.

    Raises:
        CurateError: no such document, an empty span or question or answer (nothing written).
        WorkspaceError: read-only or unwritable.
    """
    doc = session.dataset.documents.get(doc_key)
    if doc is None:
        raise CurateError(f"no document '{doc_key}' in the corpus")
    if not 0 <= start < end <= len(doc.text):
        raise CurateError("select a span of the document as the passage first")
    passage = doc.text[start:end]
    if not passage.strip():
        raise CurateError("the selected span is only whitespace")
    question, answer = question.strip(), answer.strip()
    if not question or not answer:
        raise CurateError("a hand-written pair needs a question and an answer")
    from mtcb_curate.verify.chunk_index import window_of_span

    chunk_index = window_of_span(session.corpus_index, start, end, key=doc_key)
    return session.add_pair(doc_key, question, answer, passage, chunk_index, origin=Via.HAND.value,
                            details={"span": [start, end]})
