"""The ``findable`` check: can MTCB's scoring ever find the passage?

MTCB counts a hit only when one retrieved chunk holds the whole passage
(``passage in chunk.text``). A passage longer than the reference chunk size (``[preview]
reference_size``, default 2,048 characters: MTCB's generator chunks) can never be held by a
chunk of that size: it fails. A passage that every configured chunker (``[preview] chunkers``)
cuts across chunks warns: chunk boundaries cutting passages are what the benchmark measures, so
only the impossible case fails. The cut part reads the preview cache only (``mtcb-curate
preview`` fills it; ``preview.placement``): without one it is not evaluated and the message
says so; the checklist never chunks the corpus.
"""

from __future__ import annotations

from collections.abc import Mapping

from mtcb_curate.checks.base import CheckContext, CheckResult, CheckStatus, check, result
from mtcb_curate.preview.placement import CUT, cached_placements


def findable_problem(passage: str, reference_size: int,
                     placements: Mapping[str, str | None] | None = None) -> tuple[str, str] | None:
    """The ``findable`` verdict on one passage: ``("fail", reason)`` longer than
    ``reference_size`` characters; ``("warn", reason)`` when ``placements`` (spec text ->
    ``preview.placement`` state) says every configured chunker cuts it; None otherwise (an
    empty passage or one absent from the corpus is ``verbatim``'s fault, not this one's)."""
    n = len(passage)
    if n > reference_size:
        return CheckStatus.FAIL, (f"{n:,} characters: longer than the reference chunk size {reference_size:,}; "
                                  "no chunk of that size can hold it")
    if placements and all(v == CUT for v in placements.values()):
        specs = ", ".join(placements)
        return CheckStatus.WARN, f"cut across chunks by every configured chunker ({specs})"
    return None


#: (config path, mtime ns, ctime ns, size) -> the settings read from that version of the file.
_SETTINGS_CACHE: dict[tuple, object] = {}


def clear_settings_cache() -> None:
    """Forget the settings read so far (the next ``settings`` call reads the file again)."""
    _SETTINGS_CACHE.clear()


def settings(ctx=None):
    """The ``[preview]`` settings of the default config file (defaults when it cannot be read).

    Read once per version of the file (its path, mtime, ctime and size; an absent file is a
    version too): ``pair_problems`` calls this on every key in the app, and a stat costs
    microseconds where parsing the TOML cost a fraction of a millisecond."""
    from mtcb_curate.config import default_config_path
    from mtcb_curate.errors import CurateError
    from mtcb_curate.preview.chunkers import DEFAULT_SPECS, parse_spec
    from mtcb_curate.preview.settings import PreviewSettings

    path = default_config_path()
    try:
        st = path.stat()
        version = (str(path), st.st_mtime_ns, st.st_ctime_ns, st.st_size)
    except OSError:
        version = (str(path), None, None, None)
    got = _SETTINGS_CACHE.get(version)
    if got is not None:
        return got
    try:
        got = PreviewSettings.resolve()
    except (CurateError, ValueError, OSError):
        got = PreviewSettings(tuple(parse_spec(x) for x in DEFAULT_SPECS))
    if len(_SETTINGS_CACHE) > 16:
        _SETTINGS_CACHE.clear()
    _SETTINGS_CACHE[version] = got
    return got


def placements(ctx: CheckContext) -> dict[int, dict[str, str | None]] | None:
    """pair id -> spec text -> placement for ``ctx.accepted`` from the preview cache (computed
    once per context), or None when no preview cache exists for this workspace."""
    if "_findable_placements" in ctx.__dict__:
        return ctx.__dict__["_findable_placements"]
    s = settings(ctx)
    out = None
    session = ctx.session
    folder = getattr(session.workspace, "path", None) if ctx.has_workspace else None
    if folder is not None:
        documents = {k: d.text for k, d in ctx.dataset.documents.items()}
        items = []
        for pid, v in ctx.views.items():
            r = ctx.verified.get(pid)
            keys = [v.pair.doc_key] + [k for k, _ in (r.elsewhere if r is not None else ())]
            items.append((pid, v.question, v.passage, keys))
        out = cached_placements(documents, items, s.chunkers, s.retriever, s.k, folder)
    ctx.__dict__["_findable_placements"] = out
    return out


@check("findable", CheckStatus.FAIL)
def findable(ctx: CheckContext) -> CheckResult:
    """Fails: the passage is longer than the reference chunk size (``[preview] reference_size``,
    2,048 characters by default): no chunk of that size can hold it. Warns: every configured
    chunker (``[preview] chunkers``) cuts it, read from the preview cache (not evaluated before
    a preview has run)."""
    s = settings(ctx)
    ref = s.reference_size
    places = placements(ctx)
    reasons, failing = {}, set()
    for pid, v in ctx.views.items():
        problem = findable_problem(v.passage, ref, (places or {}).get(pid))
        if problem is not None:
            severity, reasons[pid] = problem
            if severity == CheckStatus.FAIL:
                failing.add(pid)
    message = f"passages up to the reference chunk size {ref:,} characters"
    if places is None:
        message += "; cut by every chunker: not evaluated (no preview has run: mtcb-curate preview NAME)"
    elif any(v is None for p in places.values() for v in p.values()):
        message += "; cut by every chunker: evaluated where a preview has chunked the corpus"
    else:
        specs = ", ".join(c.text for c in s.chunkers)
        message += f"; cut by every chunker ({specs}): from the preview cache"
    return result("findable", reasons, failing, message)
