"""The statistics of a session, with everything they depend on resolved in one place.

``mtcb-curate stats``, the statistics screen and the dataset card compute them through
:func:`session_stats`: the passage limits (``checks.Limits.resolve``), the targets
(``stats.Targets.resolve``: the ``[stats]`` table), the on-disk window cache (``stats.windows``, in the user
cache directory: keyed by document text, shared by every workspace) and per-pair cache
(``stats.located``, in the workspace's ``stats-windows/``, else the user cache directory),
the LLM cache and the ``[llm]`` prices, the findability preview's saved scores
(:func:`findability`) and the LLM's saved question tags (:func:`llm_tags`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from mtcb_curate.checks import ChecklistReport, Limits
from mtcb_curate.collector import collection_paused
from mtcb_curate.stats import Stats, Targets, compute_stats
from mtcb_curate.stats.located import CACHE_NAME as LOCATED_NAME
from mtcb_curate.stats.windows import CACHE_FOLDER, default_cache_dir
from mtcb_curate.store.session import ReviewSession


def llm_prices(config: Path | None = None) -> tuple[float, float] | None:
    """``([llm] price_input_per_1m, price_output_per_1m)`` in USD, or None when either is unset
    or not a number (the cost is then "unknown", never a guess).

    Raises:
        CurateError: the config file is not valid TOML.
    """
    from mtcb_curate.config import read_table

    table = read_table("llm", config)
    a, b = table.get("price_input_per_1m"), table.get("price_output_per_1m")
    ok = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return (float(a), float(b)) if ok else None


def llm_usage(path: Path) -> tuple[int, int, int] | None:
    """(calls paid for, prompt tokens, completion tokens) recorded in the LLM cache file ``path``
    (``llm.cache``), or None when there is no such file or it is not a readable cache."""
    import sqlite3

    from mtcb_curate.llm.cache import ResponseCache

    if not Path(path).is_file():
        return None
    try:
        with ResponseCache(path) as cache:
            calls = cache.calls()
            pt, ct = cache.usage()
    except sqlite3.Error:
        return None
    return calls, pt, ct


def findability(session: ReviewSession, ids: Iterable[int] | None = None, *, has_workspace: bool = True,
                 config: Path | None = None) -> dict:
    """The findability preview's scores of ``ids`` (None: every pair) per configured chunker, from
    the per-pair results an earlier preview (``mtcb-curate preview``, or the app's ``F``) saved in
    the workspace's ``preview-cache/`` for this corpus: nothing is chunked, indexed or scored.

    Returns:
        ``{"run": False}`` when no configured chunker (``[preview]``: chunkers, retriever, k) has
        results saved for this corpus (or there is no workspace), else ``{"run": True,
        "retriever", "k": [k, ...], "chunkers": [{"chunker", "chunks", "pairs", "scored",
        "recall": {"@k": share}, "mrr": {"@k": value}, "ceiling", "longer_than_chunk"} or
        {"chunker", "pairs", "scored": 0}]}``: MTCB's recall@k and MRR@k, and the ceiling
        (share of passages some chunk holds whole), over the ``scored`` pairs of ``pairs``: those
        whose current question and passage the preview scored (``preview.scoring.summarize``).

    Raises:
        CurateError: the config file is not valid TOML, or a ``[preview]`` value is invalid.
    """
    if not has_workspace:
        return {"run": False}
    from mtcb_curate.dataset.model import PASSAGE_FIELD
    from mtcb_curate.preview import cache as pcache
    from mtcb_curate.preview.placement import memo_name
    from mtcb_curate.preview.scoring import Item, summarize
    from mtcb_curate.preview.settings import PreviewSettings

    settings = PreviewSettings.resolve(config)
    store = pcache.PreviewCache(Path(session.workspace.path))
    if store.folder is None or not store.folder.is_dir():
        return {"run": False}
    fp = session.corpus_fingerprint
    memos = {}
    for spec in settings.chunkers:
        got = store.get(memo_name(fp, spec, settings.retriever, settings.k))
        memos[spec.text] = got if isinstance(got, dict) and got else None
    if not any(memos.values()):
        return {"run": False}
    id_list = list(range(len(session))) if ids is None else sorted(set(ids))
    pairs = session.pairs
    questions, passages = session.edited_texts("question"), session.edited_texts(PASSAGE_FIELD)
    items = [Item(i, questions.get(i, pairs[i].question), passages.get(i, pairs[i].passage), pairs[i].doc_key)
             for i in id_list]
    rows = []
    for spec in settings.chunkers:
        memo = memos[spec.text]
        scored = [it for it in items if (it.question, it.passage) in memo] if memo else []
        if not scored:
            rows.append({"chunker": spec.text, "pairs": len(items), "scored": 0})
            continue
        n_chunks = memo.get(("", "\0n_chunks"))  # as app.preview.score_spec writes it
        score = summarize(spec.text, settings.retriever, scored, settings.k, memo, {}, n_chunks)
        row = score.to_dict(with_pairs=False)
        rows.append({"chunker": spec.text, "chunks": row["chunks"], "pairs": len(items), "scored": len(scored),
                     "recall": row["recall"], "mrr": row["mrr"], "ceiling": row["ceiling"],
                     "longer_than_chunk": row["longer_than_chunk"]})
    return {"run": True, "retriever": settings.retriever, "k": list(settings.k), "chunkers": rows}


def separation(session: ReviewSession, ids: Iterable[int] | None = None, *, has_workspace: bool = True,
               config: Path | None = None) -> dict:
    """Whether the pairs ``ids`` (None: every pair) tell the configured chunkers apart
    (``preview.separation``), from the per-pair results an earlier preview saved in the
    workspace's ``preview-cache/``: nothing is chunked, indexed or scored. Only the pairs every
    configured chunker has results for (their current question and passage) are compared.

    Returns:
        ``{"run": False}`` when no configured chunker has saved results (or there is no
        workspace), else ``{"run": True, "scored": pairs compared, "of": pairs asked,
        "missing": [chunkers without saved results], **Separation.to_json()}`` without the
        per-pair rows (the ``[preview]`` seed, resamples, detect and power apply).

    Raises:
        CurateError: the config file is not valid TOML, or a ``[preview]`` value is invalid.
    """
    if not has_workspace:
        return {"run": False}
    from mtcb_curate.preview.scoring import summarize
    from mtcb_curate.preview.separation import separate_scores
    from mtcb_curate.preview.settings import PreviewSettings

    settings = PreviewSettings.resolve(config)
    memos = _saved_memos(session, settings)
    if memos is None:
        return {"run": False}
    items = _current_items(session, ids)
    have = {spec: memo for spec, memo in memos.items() if memo}
    scored = [it for it in items if all((it.question, it.passage) in memo for memo in have.values())]
    scores = [summarize(spec, settings.retriever, scored, settings.k, memo, {}) for spec, memo in have.items()]
    sep = settings.separation
    out = separate_scores(scores, settings.k, seed=sep.seed, resamples=sep.resamples, detect=sep.detect,
                          power=sep.power, retriever=settings.retriever).to_json()
    out.pop("per_pair", None)
    return {"run": True, "scored": len(scored), "of": len(items),
            "missing": [spec for spec, memo in memos.items() if not memo], **out}


def _saved_memos(session: ReviewSession, settings) -> dict | None:
    """spec text -> the preview's saved per-pair results (a non-empty memo, or None) for each
    configured chunker; None when there is none at all."""
    from mtcb_curate.preview import cache as pcache
    from mtcb_curate.preview.placement import memo_name

    store = pcache.PreviewCache(Path(session.workspace.path))
    if store.folder is None or not store.folder.is_dir():
        return None
    fp = session.corpus_fingerprint
    memos = {}
    for spec in settings.chunkers:
        got = store.get(memo_name(fp, spec, settings.retriever, settings.k))
        memos[spec.text] = got if isinstance(got, dict) and got else None
    return memos if any(memos.values()) else None


def _current_items(session: ReviewSession, ids: Iterable[int] | None):
    """``preview.scoring.Item`` of ``ids`` (None: every pair) with their current texts."""
    from mtcb_curate.dataset.model import PASSAGE_FIELD
    from mtcb_curate.preview.scoring import Item

    id_list = list(range(len(session))) if ids is None else sorted(set(ids))
    pairs = session.pairs
    questions, passages = session.edited_texts("question"), session.edited_texts(PASSAGE_FIELD)
    return [Item(i, questions.get(i, pairs[i].question), passages.get(i, pairs[i].passage), pairs[i].doc_key)
            for i in id_list]


def llm_tags(session: ReviewSession, ids: Iterable[int] | None = None, *, has_workspace: bool = True) -> dict:
    """The LLM's question forms and types (``llm.tagging``) of ``ids`` (None: every pair), read
    from the workspace's LLM cache (what ``stats --llm-tags`` paid for; no call), for the pairs
    tagged with their current question and answer.

    Returns:
        ``{"tagged": 0}`` when none is, else ``{"tagged", "pairs", "forms": {form: n},
        "types": {type: n}, "unusable": n (replies without a known form or type), "agree":
        {"form": n, "type": n} (pairs whose LLM tag equals the rules' one, of those with a
        usable tag)}``; forms and types in ``stats.questions`` order, every name present.
    """
    if not has_workspace:
        return {"tagged": 0}
    import sqlite3

    from mtcb_curate.llm.cache import CACHE_NAME
    from mtcb_curate.llm.tagging import cached_tags
    from mtcb_curate.stats.questions import FORMS, TYPES, question_form, question_type

    path = Path(session.workspace.path) / CACHE_NAME
    if not path.is_file():
        return {"tagged": 0}
    items = tag_items(session, ids)
    try:
        tags = cached_tags(path, items)
    except sqlite3.Error:
        return {"tagged": 0}
    if not tags:
        return {"tagged": 0}
    forms, types = dict.fromkeys(FORMS, 0), dict.fromkeys(TYPES, 0)
    agree = {"form": 0, "type": 0}
    unusable = 0
    view = session.view
    for pid, tag in tags.items():
        unusable += tag.form is None or tag.type is None
        v = view(pid)
        rule_form = question_form(v.question)
        if tag.form is not None:
            forms[tag.form] += 1
            agree["form"] += tag.form == rule_form
        if tag.type is not None:
            types[tag.type] += 1
            agree["type"] += tag.type == question_type(v.question, v.answer, v.passage, rule_form)
    return {"tagged": len(tags), "pairs": len(items), "forms": forms, "types": types, "unusable": unusable,
            "agree": agree}


def tag_items(session: ReviewSession, ids: Iterable[int] | None = None) -> list[tuple[int, str, str]]:
    """``(pair_id, question, answer)`` of ``ids`` (None: every pair), current texts, for
    ``llm.tagging``."""
    id_list = list(range(len(session))) if ids is None else sorted(set(ids))
    pairs = session.pairs
    questions, answers = session.edited_texts("question"), session.edited_texts("answer")
    return [(i, questions.get(i, pairs[i].question), answers.get(i, pairs[i].answer)) for i in id_list]


def session_stats(session: ReviewSession, ids: Iterable[int] | None = None, *, has_workspace: bool = True,
                  config: Path | None = None, results: Mapping | None = None,
                  report: ChecklistReport | None = None, build_windows: bool = True, verify: bool = True,
                  count_tokens: bool = True, tag: bool = True, with_separation: bool = True) -> Stats:
    """``stats.compute_stats`` of ``session`` over ``ids`` (None: every pair), with the findability
    preview's saved scores (:func:`findability`) and the LLM's saved tags (:func:`llm_tags`).

    Args:
        session: the review session (only read).
        ids: the subset (the review screen's filter), or None.
        has_workspace: False when the session's workspace is a throw-away one (a command on a
            source alone): windows are cached in the user cache directory, no LLM usage is read.
        config: the config file (None: the default one) for ``[checklist]``, ``[stats]``, ``[llm]``.
        results: pair id -> verification already at hand (the app's scan).
        report: a checklist report to summarize.
        build_windows: tokenize documents whose windows are not cached yet.
        verify, count_tokens, tag: verify the pairs, count the passage tokens, tag the
            questions not cached (else left pending: ``compute_stats``).
        with_separation: compare the chunkers on the preview's saved results (:func:`separation`,
            about 0.1-1 s: a bootstrap); False leaves ``stats.separation`` ``{"run": False}``.

    Raises:
        CurateError: the config file is not valid TOML, or a ``[stats]`` or ``[preview]`` value
            is invalid.
    """
    from mtcb_curate.llm.cache import CACHE_NAME

    from mtcb_curate.preview.settings import PreviewSettings

    profile = session.dataset.profile
    folder = Path(session.workspace.path)
    specs = PreviewSettings.resolve(config).chunkers
    limits = Limits.resolve(profile, config)
    # The windows depend only on a document's text (files named by its sha1): one cache for
    # every workspace, so a new workspace over a corpus seen before does not tokenize it again.
    windows = default_cache_dir()
    figures = folder / CACHE_FOLDER if has_workspace else windows
    with collection_paused():  # hundreds of thousands of objects, all kept: no full collections meanwhile
        stats = compute_stats(
            session, ids, results=results, passage_limits=(limits.min_chars, limits.max_chars),
            targets=Targets.resolve(profile, config), report=report,
            windows_cache=windows, located_cache=figures / LOCATED_NAME,
            build_windows=build_windows, verify=verify, count_tokens=count_tokens, tag=tag,
            llm_usage=llm_usage(folder / CACHE_NAME) if has_workspace else None, prices=llm_prices(config),
            chunkers=[(s.text, s.unit, s.size) for s in dict.fromkeys(specs)])
    stats.findability = findability(session, ids, has_workspace=has_workspace, config=config)
    stats.llm_tags = llm_tags(session, ids, has_workspace=has_workspace)
    if with_separation:
        stats.separation = separation(session, ids, has_workspace=has_workspace, config=config)
    return stats
