"""The MTCB dataset profiles: Hub id, document key and the column variants each set really uses.

Source of every fact here: ``chonkie-inc/mtcb`` v0.1.0 and the dataset cards, as summarised in
the project notes (``shared/notes/mtcb.md``). In short:

- A question points at its document through a *document key*: the value of a question column
  that equals the value of a corpus column. Ficha links ``ticker`` to ``ticker``; sencha links
  questions' ``paper_id`` to corpus ``id``; hojicha links ``document_title`` to corpus ``title``.
  Where MTCB did not publish it (cocha, tacha, ryokucha, genmaicha), the key is detected from
  the columns both configs share.
- The supporting passage is in ``supporting_passage``, ``chunk-must-contain`` or
  ``chunk_must_contain`` (the generator's own spelling); the document text in ``text``,
  ``content`` or ``readme`` (macha once published ``readme``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

PASSAGE_COLUMNS: tuple[str, ...] = ("supporting_passage", "chunk-must-contain", "chunk_must_contain")
TEXT_COLUMNS: tuple[str, ...] = ("text", "content", "readme")
QUESTION_COLUMNS: tuple[str, ...] = ("question", "query")
ANSWER_COLUMNS: tuple[str, ...] = ("answer", "answers")
CHUNK_INDEX_COLUMN = "chunk_index"

#: Columns that are never a document key even when both configs have them.
_NOT_KEYS = frozenset({CHUNK_INDEX_COLUMN, *PASSAGE_COLUMNS, *TEXT_COLUMNS, *QUESTION_COLUMNS,
                       *ANSWER_COLUMNS, "id", "__index_level_0__"})


@dataclass(frozen=True)
class Profile:
    """How one dataset's two configs are read.

    Attributes:
        name: the dataset name used on the command line (``ficha``).
        hub_id: the Hugging Face Hub repo id the set was first published under
            (``chonkie-ai/ficha``); the default publish target.
        hub_owner_fixed: True when the name given was a full repo id (``someone/ficha``): that
            id is the only one loaded. Otherwise ``hub_candidates`` tries each configured
            organisation.
        domain: a short description of what the documents are.
        question_key: the document-key column in the ``questions`` config, or None to detect.
        corpus_key: the matching column in the ``corpus`` config (defaults to ``question_key``).
        passage_columns: candidate passage columns in order of preference.
        text_columns: candidate document-text columns in order of preference.
        question_columns / answer_columns: candidate question and answer columns.
        corpus_config / questions_config: config names on the Hub.
        prompt_hint: a short domain hint for LLM generation prompts.
    """

    name: str
    hub_id: str
    domain: str = ""
    question_key: str | None = None
    corpus_key: str | None = None
    passage_columns: tuple[str, ...] = PASSAGE_COLUMNS
    text_columns: tuple[str, ...] = TEXT_COLUMNS
    question_columns: tuple[str, ...] = QUESTION_COLUMNS
    answer_columns: tuple[str, ...] = ANSWER_COLUMNS
    corpus_config: str = "corpus"
    questions_config: str = "questions"
    prompt_hint: str = ""
    extra: dict[str, str] = field(default_factory=dict)
    hub_owner_fixed: bool = False

    def hub_candidates(self, organisations: tuple[str, ...] | list[str]) -> list[str]:
        """The Hub repo ids to try, in order: ``ORG/NAME`` for each of ``organisations``, or
        only ``hub_id`` when the dataset was named by a full repo id."""
        if self.hub_owner_fixed:
            return [self.hub_id]
        repo = self.hub_id.rsplit("/", 1)[-1]
        return list(dict.fromkeys(f"{org}/{repo}" for org in organisations)) or [self.hub_id]

    def with_overrides(
        self,
        *,
        doc_key: str | None = None,
        corpus_key: str | None = None,
        passage_column: str | None = None,
        text_column: str | None = None,
        question_column: str | None = None,
        answer_column: str | None = None,
    ) -> "Profile":
        """Return a copy with explicit column choices (the command line's ``--doc-key`` ...)."""
        p = self
        if doc_key:
            p = replace(p, question_key=doc_key, corpus_key=corpus_key or doc_key)
        elif corpus_key:
            p = replace(p, corpus_key=corpus_key)
        if passage_column:
            p = replace(p, passage_columns=(passage_column,))
        if text_column:
            p = replace(p, text_columns=(text_column,))
        if question_column:
            p = replace(p, question_columns=(question_column,))
        if answer_column:
            p = replace(p, answer_columns=(answer_column,))
        return p


_FINANCIAL = "Financial filings: ask about specific figures, dates, segments and risk factors."
_LEGAL = "Contracts: quote clauses of 150-400 characters; ask about parties, terms, obligations."
_SCIENTIFIC = "Scientific papers: quote 200-600 characters; ask about methods, data and results."
_CODE = "Source code and READMEs: ask about specific functions, options and behaviours."

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("gacha", "chonkie-ai/gacha", "Project Gutenberg books", "title", "title",
                passage_columns=("chunk-must-contain", "supporting_passage", "chunk_must_contain")),
        Profile("ficha", "chonkie-ai/ficha", "SEC 10-K filings", "ticker", "ticker",
                passage_columns=("supporting_passage", "chunk-must-contain", "chunk_must_contain"),
                prompt_hint=_FINANCIAL),
        Profile("macha", "chonkie-ai/macha", "GitHub READMEs", "repo", "repo",
                passage_columns=("chunk-must-contain", "supporting_passage", "chunk_must_contain"),
                text_columns=("text", "readme", "content"), prompt_hint=_CODE),
        Profile("cocha", "chonkie-ai/cocha", "source code in 10 languages",
                passage_columns=("chunk-must-contain", "supporting_passage", "chunk_must_contain"),
                prompt_hint=_CODE),
        Profile("tacha", "chonkie-ai/tacha", "financial tables (TAT-QA)",
                passage_columns=("chunk-must-contain", "supporting_passage", "chunk_must_contain"),
                prompt_hint=_FINANCIAL),
        Profile("sencha", "chonkie-ai/sencha", "NLP papers (QASPER)", "paper_id", "id",
                passage_columns=("chunk-must-contain", "supporting_passage", "chunk_must_contain"),
                prompt_hint=_SCIENTIFIC),
        Profile("hojicha", "chonkie-ai/hojicha", "contracts (CUAD)", "document_title", "title",
                passage_columns=("chunk-must-contain", "supporting_passage", "chunk_must_contain"),
                prompt_hint=_LEGAL),
        Profile("ryokucha", "chonkie-ai/ryokucha", "clinical guidelines",
                passage_columns=("chunk-must-contain", "supporting_passage", "chunk_must_contain"),
                prompt_hint=_SCIENTIFIC),
        Profile("genmaicha", "chonkie-ai/genmaicha", "lecture transcripts",
                passage_columns=("chunk-must-contain", "supporting_passage", "chunk_must_contain")),
    )
}


def get_profile(name: str) -> Profile:
    """Return the profile for ``name``; an unknown name gets a generic profile.

    A name of the form ``owner/repo`` (or ``nano-NAME``) reuses the MTCB profile it names, so
    ``chonkie-ai/nano-ficha`` reads like ficha. Any other name gets a profile whose document key
    and columns are detected from the data (override with ``--doc-key`` and friends).
    """
    base = name.rsplit("/", 1)[-1]
    if base.startswith("nano-"):
        base = base[len("nano-"):]
    if base in PROFILES:
        p = PROFILES[base]
        if name != base:
            p = replace(p, name=name.rsplit("/", 1)[-1], hub_id=name if "/" in name else f"chonkie-ai/{name}",
                        hub_owner_fixed="/" in name)
        return p
    return Profile(name=base, hub_id=name if "/" in name else f"chonkie-ai/{name}", hub_owner_fixed="/" in name)


def detect_document_key(question_columns: list[str], corpus_columns: list[str]) -> str | None:
    """Pick the document key from the columns both configs share.

    Preference: a shared column named like a key (``ticker``, ``title``, ``doc_id``,
    ``document_id``, ``repo``, ``paper_id``, ``id``-like), else the first shared column that
    is not a text, passage, question, answer or chunk_index column. Returns None when the
    configs share no usable column.
    """
    shared = [c for c in question_columns if c in corpus_columns and c not in _NOT_KEYS]
    preferred = ("ticker", "title", "doc_id", "document_id", "repo", "paper_id", "document_title",
                 "filename", "file", "path", "name")
    for p in preferred:
        if p in shared:
            return p
    return shared[0] if shared else None


def first_present(candidates: tuple[str, ...], columns: list[str]) -> str | None:
    """Return the first of ``candidates`` that is in ``columns``, or None."""
    for c in candidates:
        if c in columns:
            return c
    return None
