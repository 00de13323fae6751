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
from mtcb_curate.neardup import Cluster, Link
from mtcb_curate.session import ReviewSession

REASON_LLM = "LLM: semantic duplicate"
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
    """Every near-duplicate cluster among the session's pairs (or among ``ids``), largest first.

    Clusters from rapidfuzz and from the stored LLM dedup are merged where they share a member.
    """
    items = session_items(session, ids)
    chosen = {it.id for it in items}
    not_dups = session.not_duplicates()
    found = neardup.find_clusters(items, threshold=threshold, not_duplicates=not_dups)
    extra: list[Link] = []
    texts = {it.id: it.question for it in items}
    for group in llm_clusters(session):
        group = [i for i in group if i in chosen]
        keep = group[0] if group else None
        for other in group[1:]:
            a, b = min(keep, other), max(keep, other)
            if (a, b) not in not_dups:
                extra.append(Link(a, b, (REASON_LLM,), round(neardup.question_similarity(texts[a], texts[b]), 1)))
    if not extra:
        return found
    return _merge(found, extra, {it.id: it.doc_key for it in items}, texts)


def _merge(clusters: list[Cluster], extra: list[Link], doc_keys: dict[int, str],
           texts: dict[int, str]) -> list[Cluster]:
    """Union ``clusters`` with extra links into connected components."""
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    links: list[Link] = [link for c in clusters for link in c.links] + extra
    for c in clusters:
        for i in c.ids[1:]:
            parent[root(i)] = root(c.ids[0])
    for link in extra:
        parent[root(link.b)] = root(link.a)
    groups: dict[int, list[Link]] = {}
    for link in links:
        groups.setdefault(root(link.a), []).append(link)
    out = []
    for group_links in groups.values():
        ids = sorted({i for link in group_links for i in (link.a, link.b)})
        reasons = [r for r in (*neardup.REASONS, REASON_LLM) if any(r in link.reasons for link in group_links)]
        if len(ids) <= neardup.PAIRWISE_MAX:
            scores = tuple((a, b, round(neardup.question_similarity(texts[a], texts[b]), 1))
                           for k, a in enumerate(ids) for b in ids[k + 1:])
        else:
            scores = tuple((link.a, link.b, link.score) for link in group_links)
        out.append(Cluster(tuple(ids), tuple(sorted(group_links, key=lambda x: (x.a, x.b))), scores,
                           tuple(reasons), tuple(sorted({doc_keys[i] for i in ids}))))
    out.sort(key=lambda c: (-c.size, c.ids[0]))
    return out


def unresolved(session: ReviewSession, clusters: Iterable[Cluster]) -> list[Cluster]:
    """The clusters with more than one member not rejected (largest first)."""
    return neardup.unresolved(clusters, session.status)
