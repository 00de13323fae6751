"""The review app's analysis, as its worker process does it (``python -m mtcb_curate.worker JOB``,
whose stdin/stdout protocol is in ``mtcb_curate/worker.py``).

``JOB`` is a ``job.json`` written by ``app.analysis`` beside the inputs (``app.analysis_store``
lays out the folder). The work, each stage kept on disk under its key so that a stage already
done (by an earlier run, or by a run of this job that was killed) is not done again:

1. **verdicts**: every pair's passage verified in its document, exact, normalized and fuzzy
   (``verify.verify_dataset``), with its occurrences in other documents, its ``chunk_index``
   window and its token count (``dataset.token_cache``: windows and counts made here are kept
   for the next session). Pairs whose document key, ``chunk_index`` and passage are those of
   the previous run on the same corpus are not verified again.
2. **links**: every near-duplicate and shared-passage link (``neardup.search_links``; passages
   located by their exact verdicts).
3. **groups**: the near-duplicate clusters and shared-passage groups over every pair, with the
   curator's marks, and over the pairs not rejected (the set-wide checks read those), from the
   links and the scored questions only (the pairs' texts are let go first).
   What is done so far is announced (``ready``): the app takes the verdicts and groups now.
4. **answerable**: every pair's ``answerable`` support reason
   (``checks.questions.overlap_problem``: figures, stemmed words, paraphrase with wordllama),
   so the app's process never loads the paraphrase model for a pair the analysis saw. Pairs
   whose texts had a reason in the previous run are not worked out again. A large set gets
   the reasons of the pairs the curator meets first (the job's ``answer_ids``: see
   ``app.analysis.ANSWERABLE_AHEAD``); the app works out the others when it shows them. A job
   whose ``answer_ids`` is empty loads neither the stemmer nor the paraphrase model.

Nothing here imports Textual, the ``datasets`` library or the workspace: the process reads
only its job's files.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mtcb_curate.app import analysis_store as store
from mtcb_curate.files import read_json

#: Stages, in order (the progress lines name them).
STAGES = ("verdicts", "tokens", "links", "groups", "answerable")


class Cancelled(Exception):
    """The app asked the work to stop."""


Progress = Callable[[str, int, int], None]


def run_job(job: dict[str, Any], progress: Progress | None = None,
            cancelled: Callable[[], bool] = lambda: False,
            ready: Callable[[dict[str, Any]], None] | None = None, answer: bool = True) -> dict[str, Any]:
    """Do ``job`` (the ``job.json`` values) and return what the ``done`` line says:
    ``{"text", "groups", "verified", "reused", "answered", "seconds": {stage: s},
    "peak_rss_mb"}`` (pairs verified, pairs whose verification was reused, pairs whose
    ``answerable`` reason was worked out, each stage's seconds, the process's peak resident set).

    ``progress(stage, done, total)`` is called as the work goes; ``cancelled()`` is asked at
    each call and between stages; ``ready(summary)`` once the verdicts and groups are written,
    before the ``answerable`` stage (:func:`answer_job`; ``answer`` False: not done here, the
    summary so far is returned).

    Raises:
        Cancelled: ``cancelled()`` said so.
        OSError, ValueError: an input file is missing or damaged.
    """
    folder = Path(job["folder"])
    text_key, groups_key = job["text_key"], job["groups_key"]
    here = store.text_dir(folder, text_key)
    seconds: dict[str, float] = {}

    def step(stage: str, done: int, total: int) -> None:
        if cancelled():
            raise Cancelled()
        if progress is not None:
            progress(stage, done, total)

    pairs = store.read_pairs(here / "pairs.npz")
    verdicts_path = here / "verdicts.npz"
    links_path = here / "links.npz"
    verified = reused = 0
    table = _readable(store.VerdictTable.read, verdicts_path)
    if table is None:
        t = time.perf_counter()
        corpus = store.open_corpus(store.corpus_path(folder, job["corpus"]))  # read a document at a time
        results, todo, reused, token_cache = _verify(job, folder, pairs, corpus, step)
        del corpus  # and the index over it: the token counts read the passages only
        _release()
        step("tokens", 0, len(todo))
        counts = [r.tokens for r in results]
        for i, n in zip(todo, _count_tokens([results[i].passage for i in todo], token_cache, step)):
            counts[i] = n
        verified = len(todo)
        store.write_verdicts(verdicts_path, results, [store.pair_key(k, c, p) for k, c, p in
                                                      zip(pairs.doc_keys, pairs.chunk_index, pairs.passages)],
                             job["corpus"], counts)
        del counts
        del results
        from mtcb_curate.dataset import tokens

        tokens.release_encoding()  # about 37 MB; the stages after it count no token
        _release()
        table = store.VerdictTable.read(verdicts_path)
        seconds["verdicts"] = time.perf_counter() - t
    step("links", 0, len(pairs))
    from mtcb_curate import neardup

    items = [neardup.Item(i, k, q, a, p) for i, (k, q, a, p) in
             enumerate(zip(pairs.doc_keys, pairs.questions, pairs.answers, pairs.passages))]
    extra = [tuple(x) for x in job["extra_links"]]
    arrays = _readable(store.read_links, links_path)
    spans = located_spans(table, pairs.passages) if arrays is None else None
    del table  # the search reads the located passages only
    if arrays is None:
        t = time.perf_counter()
        found = _search(job, items, spans, extra, step)
        del spans
        arrays = found.arrays()
        store.write_links(links_path, *arrays)
        links = found.for_grouping()  # the questions as the search prepared them, nothing else
        del found
        seconds["links"] = time.perf_counter() - t
    else:
        links = neardup.LinkSet.from_arrays(items, job["threshold"], *arrays, extra, workers=1).for_grouping()
    n = len(pairs)
    # grouping reads the links and the questions as the search prepared them: the texts go
    del items, arrays, pairs
    _release()
    step("groups", 0, 1)
    out_path = store.groups_path(folder, text_key, groups_key)
    if not (out_path / "meta.json").is_file():
        t = time.perf_counter()
        store.write_groups(out_path, _groups(job, links, n))
        seconds["groups"] = time.perf_counter() - t
    step("groups", 1, 1)
    del links
    _release()
    summary = {"text": text_key, "groups": groups_key, "verified": verified, "reused": reused, "answered": 0,
               "seconds": seconds, "peak_rss_mb": peak_rss_mb()}
    if ready is not None:
        ready(dict(summary))
    if not answer:
        return summary
    return answer_job(job, summary, progress, cancelled)


def answer_job(job: dict[str, Any], summary: dict[str, Any], progress: Progress | None = None,
               cancelled: Callable[[], bool] = lambda: False) -> dict[str, Any]:
    """The ``answerable`` stage of ``job`` (module docstring), after :func:`run_job`'s stages:
    ``summary`` (``run_job``'s so far) with ``answered``, the stage's seconds and the peak
    resident set (the larger of ``summary``'s and this process's) filled in.

    Raises:
        Cancelled: ``cancelled()`` said so.
        OSError, ValueError: an input file is missing or damaged.
    """
    folder = Path(job["folder"])
    here = store.text_dir(folder, job["text_key"])
    summary = dict(summary, seconds=dict(summary.get("seconds") or {}))

    def step(stage: str, done: int, total: int) -> None:
        if cancelled():
            raise Cancelled()
        if progress is not None:
            progress(stage, done, total)

    answers_path = here / "answerable.json"
    if _readable(store.read_answerable, answers_path) is None:
        t = time.perf_counter()
        ids = job.get("answer_ids")
        table, summary["answered"] = _answerable(folder, store.read_pairs(here / "pairs.npz"), step,
                                                 None if ids is None else [int(i) for i in ids])
        store.write_answerable(answers_path, table)
        summary["seconds"]["answerable"] = time.perf_counter() - t
    peaks = [x for x in (summary.get("peak_rss_mb"), peak_rss_mb()) if x is not None]
    summary["peak_rss_mb"] = max(peaks) if peaks else None
    return summary


def _answerable(folder: Path, pairs: store.PairTexts, step: Progress,
                ids: Sequence[int] | None = None) -> tuple[store.AnswerableTable, int]:
    """The pairs' ``answerable`` support reasons (an :class:`~analysis_store.AnswerableTable`)
    and how many were worked out: those of ``ids`` (default: every pair) and, for any pair,
    the previous run's for the same texts; a pair with neither is left out (key ""). The table's
    ``paraphraser`` is "" when none was worked out (no model was loaded)."""
    from mtcb_curate.checks.cache import answerable_key

    old = _previous_answers(folder)
    keys = [answerable_key(q, a, p) for q, a, p in zip(pairs.questions, pairs.answers, pairs.passages)]
    reasons: list[str | None] = [None] * len(keys)
    wanted = None if ids is None else set(ids)
    todo = []
    for i, key in enumerate(keys):
        if key in old:
            reasons[i] = old[key]
        elif wanted is None or i in wanted:
            todo.append(i)
        else:
            keys[i] = ""
    step("answerable", 0, len(todo))
    if not todo:
        return store.AnswerableTable(keys, reasons, store.answerable_stamp(), ""), 0
    from mtcb_curate.checks.questions import overlap_problem
    from mtcb_curate.evidence.paraphrase import default_paraphraser

    for n, i in enumerate(todo, 1):
        reasons[i] = overlap_problem(pairs.answers[i], pairs.passages[i], pairs.questions[i])
        if n % 200 == 0:
            step("answerable", n, len(todo))
    step("answerable", len(todo), len(todo))
    return store.AnswerableTable(keys, reasons, store.answerable_stamp(), default_paraphraser().name), len(todo)


def _previous_answers(folder: Path) -> dict[str, str | None]:
    """key -> reason of the last run that worked them out under the same stamp (empty when none)."""
    latest = read_json(folder / "latest.json")
    if not isinstance(latest, dict) or not isinstance(latest.get("text"), str):
        return {}
    table = _readable(store.read_answerable, store.text_dir(folder, latest["text"]) / "answerable.json")
    return {} if table is None else table.by_key()


def peak_rss_mb() -> float | None:
    """This process's peak resident set so far (MB; ``VmHWM`` on Linux), or None."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _release() -> None:
    """Collect what the last stage left and hand the C heap's free pages back (the next stage
    starts from less: the process's peak is one stage's, not their sum)."""
    import gc

    from mtcb_curate.collector import trim_heap

    gc.collect()
    trim_heap()  # no glibc: the pages stay with the process


def _readable(read: Callable[[Path], Any], path: Path) -> Any:
    """``read(path)``, or None when the file is missing or damaged (it is then made again)."""
    if not path.is_file():
        return None
    try:
        return read(path)
    except Exception:  # noqa: BLE001 - any damage means: work it out again
        return None


def _verify(job: dict, folder: Path, pairs: store.PairTexts, corpus: dict, step: Progress):
    """Every pair's verification (``PairResult``s in id order; those verified here without
    their token counts yet), the ids verified here, how many were reused from the previous
    run, and the token cache (or None)."""
    from dataclasses import replace

    from mtcb_curate.dataset.model import Dataset, DocumentBytes, QAPair, SourceInfo
    from mtcb_curate.dataset.profiles import get_profile
    from mtcb_curate.dataset.token_cache import TokenCache
    from mtcb_curate.verify import verify_dataset
    from mtcb_curate.verify.search import CorpusIndex

    n = len(pairs)
    old = _previous_verdicts(folder, job)
    rows = old.rows_by_key() if old is not None else {}
    keys = [store.pair_key(k, c, p) for k, c, p in zip(pairs.doc_keys, pairs.chunk_index, pairs.passages)]
    results: list = [None] * n
    todo = []
    for i, key in enumerate(keys):
        row = rows.get(key)
        if row is not None:
            results[i] = replace(old.result(row, pairs.passages[i]), id=i)
        else:
            todo.append(i)
    reused = n - len(todo)
    cache_dir = job.get("token_cache")
    token_cache = TokenCache(Path(cache_dir)) if cache_dir else None
    # ``corpus``: key -> Document read from the corpus file on access (``store.open_corpus``)
    index = CorpusIndex(DocumentBytes(corpus), token_cache)
    documents = corpus
    qa = [QAPair(i, pairs.questions[i], pairs.answers[i], pairs.passages[i], pairs.doc_keys[i],
                 pairs.chunk_index[i]) for i in todo]
    dataset = Dataset(job.get("name", ""), get_profile(job.get("name") or "generic"), documents, qa,
                      SourceInfo("files", ""))
    if qa:
        report = verify_dataset(dataset, fuzzy=True, count_tokens=False, index=index, pairs=qa,
                                progress=lambda d, t: step("verdicts", d, t))
        for r in report.results:
            results[r.id] = r
    return results, todo, reused, token_cache


def _count_tokens(passages: list[str], cache, step: Progress) -> list[int]:
    """Each passage's token count, from the token cache, counting (and keeping) those it lacks."""
    from mtcb_curate.dataset import tokens

    counts: dict[str, int] = {}
    missing: list[str] = []
    for p in passages:
        if p in counts:
            continue
        n = cache.count(p) if cache is not None else None
        if n is None:
            missing.append(p)
            counts[p] = -1
        else:
            counts[p] = n
    step_size = 1000
    encode = tokens.encoding().encode_ordinary if missing else None
    for k in range(0, len(missing), step_size):
        step("tokens", k, len(missing))
        # one call per text: tiktoken's batch call hands each text to a thread pool, which cost
        # more than the encoding of these short passages
        made = {t: len(encode(t)) for t in missing[k:k + step_size]}
        counts.update(made)
        if cache is not None:
            cache.put_counts(made)
    if missing:
        step("tokens", len(missing), len(missing))
    return [counts[p] for p in passages]


def _previous_verdicts(folder: Path, job: dict) -> store.VerdictTable | None:
    """The verdicts of the last finished run on the same corpus, or None."""
    latest = read_json(folder / "latest.json")
    if not isinstance(latest, dict) or not isinstance(latest.get("text"), str):
        return None
    path = store.text_dir(folder, latest["text"]) / "verdicts.npz"
    try:
        table = store.VerdictTable.read(path)
    except Exception:  # noqa: BLE001 - no previous run to reuse: everything is verified
        return None
    return table if table.corpus == job["corpus"] else None


def located_spans(table: store.VerdictTable, passages: Sequence[str]) -> dict[int, tuple[int, int]]:
    """Pair id -> ``(start, end)`` of the first occurrence of its passage in its document, for
    the pairs verified ``exact``: what ``neardup.passage_spans`` would find by searching (the
    other pairs are not verbatim there, or empty)."""
    from mtcb_curate.verify.verdict import Verdict

    exact = store.VERDICT_CODES.index(Verdict.EXACT)
    starts = table.column("start")
    return {i: (int(starts[i]), int(starts[i]) + len(passages[i]))
            for i in (table.verdicts == exact).nonzero()[0].tolist()}


def _search(job: dict, items: list, spans: dict[int, tuple[int, int]], extra: list, step: Progress):
    """The near-duplicate search over every pair, passages located at ``spans``
    (:func:`located_spans` of the exact verdicts)."""
    from mtcb_curate import neardup

    return neardup.search_links(items, threshold=job["threshold"], extra_links=extra, workers=1, spans=spans,
                                progress=lambda d, t: step("links", d, t))


def _groups(job: dict, links, n: int) -> dict:
    """The clusters and shared-passage groups over every pair and over the pairs not rejected."""
    not_dup = [tuple(x) for x in job["not_duplicates"]]
    shared_marks = [tuple(x) for x in job["shared_marks"]]
    clusters, shared = links.groups(not_duplicates=not_dup, shared_marks=shared_marks)
    out = {"clusters": clusters, "shared_passages": shared}
    rejected = set(job["rejected"])
    if rejected:
        live = [i for i in range(n) if i not in rejected]
        out["live_clusters"], out["live_shared_passages"] = links.groups(keep=live, not_duplicates=not_dup,
                                                                 shared_marks=shared_marks)
    return out
