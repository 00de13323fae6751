"""The statistics of a session, with everything they depend on resolved in one place.

``mtcb-curate stats``, the statistics screen and the dataset card compute them through
:func:`session_stats`: the passage limits (``checks.Limits.resolve``), the targets
(``stats.Targets.resolve``: the ``[stats]`` table), the on-disk window cache (``stats.windows``, in the user
cache directory: keyed by document text, shared by every workspace) and per-pair cache
(``stats.located``, in the workspace's ``stats-windows/``, else the user cache directory),
the LLM cache and the ``[llm]`` prices.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from mtcb_curate.checks import ChecklistReport, Limits
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
    """(calls, prompt tokens, completion tokens) recorded in the LLM cache file ``path``
    (``llm.cache``), or None when there is no such file or it is not a readable cache."""
    import sqlite3

    from mtcb_curate.llm.cache import ResponseCache

    if not Path(path).is_file():
        return None
    try:
        with ResponseCache(path) as cache:
            calls = len(cache)
            pt, ct = cache.usage()
    except sqlite3.Error:
        return None
    return calls, pt, ct


def session_stats(session: ReviewSession, ids: Iterable[int] | None = None, *, has_workspace: bool = True,
                  config: Path | None = None, results: Mapping | None = None,
                  report: ChecklistReport | None = None, build_windows: bool = True, verify: bool = True,
                  count_tokens: bool = True) -> Stats:
    """``stats.compute_stats`` of ``session`` over ``ids`` (None: every pair).

    Args:
        session: the review session (only read).
        ids: the subset (the review screen's filter), or None.
        has_workspace: False when the session's workspace is a throw-away one (a command on a
            source alone): windows are cached in the user cache directory, no LLM usage is read.
        config: the config file (None: the default one) for ``[checklist]``, ``[stats]``, ``[llm]``.
        results: pair id -> verification already at hand (the app's scan).
        report: a checklist report to summarize.
        build_windows: tokenize documents whose windows are not cached yet.
        verify, count_tokens: verify the pairs, count the passage tokens not cached (else
            left pending: ``compute_stats``).

    Raises:
        CurateError: the config file is not valid TOML, or a ``[stats]`` value is invalid.
    """
    from mtcb_curate.llm.cache import CACHE_NAME

    profile = session.dataset.profile
    folder = Path(session.workspace.path)
    limits = Limits.resolve(profile, config)
    # The windows depend only on a document's text (files named by its sha1): one cache for
    # every workspace, so a new workspace over a corpus seen before does not tokenize it again.
    windows = default_cache_dir()
    figures = folder / CACHE_FOLDER if has_workspace else windows
    return compute_stats(
        session, ids, results=results, passage_limits=(limits.min_chars, limits.max_chars),
        targets=Targets.resolve(profile, config), report=report,
        windows_cache=windows, located_cache=figures / LOCATED_NAME,
        build_windows=build_windows, verify=verify, count_tokens=count_tokens, llm_usage=llm_usage(folder / CACHE_NAME) if has_workspace else None,
        prices=llm_prices(config))
