"""Near-duplicate clusters of a review session: what the curator settles.

Two sources of links, merged into connected components:

- ``neardup.find_clusters`` over the session's current texts (edits applied, generated pairs
  included), at a threshold the curator can change;
- the LLM's semantic dedup (``llm.dedup``), stored in the workspace when it runs
  (``store_llm_clusters``), raised with the reason ``LLM: semantic duplicate``.

Pairs the curator marked "not duplicates" are never linked. A cluster is resolved when at most
one member is not rejected (``neardup.is_resolved``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from mtcb_curate import neardup
from mtcb_curate.neardup import Cluster
from mtcb_curate.store.session import ReviewSession

REASON_LLM = neardup.REASON_LLM
_META_KEY = "llm_dedup_clusters"


def session_items(session: ReviewSession, ids: Iterable[int] | None = None) -> list[neardup.Item]:
    """The session's pairs (current texts) as ``neardup.Item``s, all or only ``ids``."""
    out = []
    for pid in (range(len(session)) if ids is None else ids):
        v = session.view(pid)
        out.append(neardup.Item(pid, v.pair.doc_key, v.question, v.answer, v.passage))
    return out


def llm_clusters(session: ReviewSession) -> list[list[int]]:
    """The LLM dedup clusters stored in the workspace (member ids, kept id first)."""
    raw = session.workspace.get_meta(_META_KEY)
    if not raw:
        return []
    try:
        groups = json.loads(raw)
    except ValueError:
        return []
    n = len(session)
    return [[int(i) for i in g if 0 <= int(i) < n] for g in groups if isinstance(g, list)]


def store_llm_clusters(session: ReviewSession, groups: Sequence[Sequence[int]]) -> None:
    """Remember the LLM dedup's clusters (replacing the previous run's) in the workspace.

    Raises:
        WorkspaceError: the workspace is read-only.
    """
    session.workspace.set_meta(**{_META_KEY: json.dumps([list(map(int, g)) for g in groups if len(g) > 1])})


def find(session: ReviewSession, *, threshold: float = neardup.DEFAULT_THRESHOLD,
         ids: Iterable[int] | None = None) -> list[Cluster]:
    """Every near-duplicate cluster among the session's pairs (or among ``ids``), largest first:
    ``neardup.find_clusters`` with the stored LLM clusters as extra links (each duplicate
    linked to the question the LLM kept) and the curator's "not duplicates" marks."""
    items = session_items(session, ids)
    extra = [(group[0], other) for group in llm_clusters(session) for other in group[1:]]
    return neardup.find_clusters(items, threshold=threshold, not_duplicates=session.not_duplicates(),
                                 extra_links=extra)


def unresolved(session: ReviewSession, clusters: Iterable[Cluster]) -> list[Cluster]:
    """The clusters with more than one member not rejected (largest first)."""
    return neardup.unresolved(clusters, session.status)
