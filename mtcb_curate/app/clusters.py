"""Near-duplicate clusters of a review session: what the curator settles.

Two sources of links, merged into connected components:

- ``neardup.find_clusters`` over the session's current texts (edits applied, generated pairs
  included), at a threshold the curator can change;
- the LLM's semantic dedup (``llm.dedup``), stored in the workspace when it runs
  (``store_llm_clusters``), raised with the reason ``LLM: semantic duplicate``.

Pairs the curator marked "not duplicates" are never linked. A cluster is resolved when at most
one member is not rejected (``neardup.is_resolved``).

Clusters hold only pairs that ask the same question. Pairs whose passages are the same or
overlap (located by document offsets, ``neardup.passage_spans``) but whose questions differ
are shared-passage groups (``find_shared``, ``find_both``): a warning the curator settles by
marking the group "distinct questions on shared evidence" (``mark_shared``, undoable).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from mtcb_curate import neardup
from mtcb_curate.dataset.model import PASSAGE_FIELD
from mtcb_curate.neardup import Cluster
from mtcb_curate.store.session import ReviewSession

REASON_LLM = neardup.REASON_LLM
_META_KEY = neardup.LLM_CLUSTERS_KEY


def session_items(session: ReviewSession, ids: Iterable[int] | None = None) -> list[neardup.Item]:
    """The session's pairs (current texts) as ``neardup.Item``s, all or only ``ids``."""
    questions, answers = session.edited_texts("question"), session.edited_texts("answer")
    passages = session.edited_texts(PASSAGE_FIELD)
    pairs = session.pairs
    out = []
    for pid in range(len(session)) if ids is None else ids:
        pair = pairs[pid]
        out.append(neardup.Item(pid, pair.doc_key, questions.get(pid, pair.question), answers.get(pid, pair.answer),
                                passages.get(pid, pair.passage)))
    return out


def llm_clusters(session: ReviewSession) -> list[list[int]]:
    """The LLM dedup clusters stored in the workspace (member ids, kept id first)."""
    return neardup.llm_groups(session.workspace.get_meta(_META_KEY), len(session))


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
    extra = neardup.llm_links(session.workspace.get_meta(_META_KEY), len(session))
    return neardup.find_clusters(items, threshold=threshold, not_duplicates=session.not_duplicates(),
                                 extra_links=extra)


def search(session: ReviewSession, *, threshold: float = neardup.DEFAULT_THRESHOLD,
           ids: Iterable[int] | None = None, located: Mapping[int, tuple[int, int] | None] | None = None,
           workers: int = -1) -> neardup.LinkSet:
    """Every near-duplicate and shared-passage link among the session's pairs (or ``ids``),
    current texts, with the stored LLM clusters as extra links: one search, to group with
    ``groups`` (and, for the problems line, ``checks.pair.set_check_results(search=...)``).

    ``located``: where passages already are (exact verdicts' spans, for the current
    passages); the rest are searched in their documents (``neardup.passage_spans``).
    ``workers``: rapidfuzz threads (``-1``: every core)."""
    items = session_items(session, ids)
    extra = neardup.llm_links(session.workspace.get_meta(_META_KEY), len(session))
    return neardup.search_links(items, threshold=threshold, extra_links=extra, workers=workers,
                                spans=neardup.passage_spans(session.dataset, items, known=located))


def groups(session: ReviewSession, found: neardup.LinkSet) -> tuple[list[Cluster], list[Cluster]]:
    """``(clusters, shared)`` of a ``search`` with the curator's current "not duplicates" and
    shared-evidence marks (each largest first)."""
    return found.groups(not_duplicates=session.not_duplicates(), shared_marks=session.shared_evidence())


def find_both(session: ReviewSession, *, threshold: float = neardup.DEFAULT_THRESHOLD,
              ids: Iterable[int] | None = None) -> tuple[list[Cluster], list[Cluster]]:
    """``(clusters, shared)`` from one search: the clusters of ``find`` and the shared-passage
    groups of ``find_shared`` (each largest first)."""
    return groups(session, search(session, threshold=threshold, ids=ids))


def find_shared(session: ReviewSession, *, threshold: float = neardup.DEFAULT_THRESHOLD,
                ids: Iterable[int] | None = None) -> list[Cluster]:
    """The shared-passage groups among the session's pairs (or ``ids``), largest first: pairs
    of one document whose passages are the same or overlap (by document offsets where the
    passage is verbatim, else as text) and that no question rule links; pairs marked
    "distinct questions on shared evidence" or "not duplicates" are left out."""
    return find_both(session, threshold=threshold, ids=ids)[1]


def mark_shared(session: ReviewSession, group: Cluster | Sequence[int]) -> bool:
    """Mark a shared-passage group "distinct questions on shared evidence" (every pair of its
    members; undone by ``session.undo``); False when every pair already was.

    Raises:
        WorkspaceError: the workspace is read-only.
    """
    ids = list(group.ids if isinstance(group, Cluster) else group)
    return session.mark_shared_evidence(ids)


def keep_one(session: ReviewSession, keep: int, ids: Sequence[int]) -> list[int]:
    """Resolve a near-duplicate cluster: accept ``keep`` and reject the other pairs of ``ids``
    as its duplicates, as ONE undo step (``ReviewSession.keep_one``). Returns the pairs rejected.

    Raises:
        WorkspaceError: read-only or unwritable. IndexError: no such pair.
    """
    return session.keep_one(keep, list(ids))


def mark_not_duplicates(session: ReviewSession, group: Cluster | Sequence[int]) -> bool:
    """Mark every pair of a cluster's members "not duplicates": never raised together again
    (undone by ``session.undo``); False when every pair already was.

    Raises:
        WorkspaceError: read-only or unwritable. IndexError: no such pair.
    """
    ids = list(group.ids if isinstance(group, Cluster) else group)
    return session.mark_not_duplicates(ids)


def split(session: ReviewSession, cluster: Cluster, keep: Sequence[int]) -> bool:
    """Split ``cluster``: the members of ``keep`` stay one cluster, every other member is moved
    out (marked "not duplicates" of each kept member, ``neardup.split_pairs``): saved in the
    workspace at once (kept across restarts), ONE undo step. False when every such pair already
    was marked.

    Raises:
        ValueError: ``keep`` holds a non-member, or no member, or every member.
        WorkspaceError: the workspace is read-only.
    """
    return session.mark_not_duplicate_pairs(neardup.split_pairs(cluster, keep))


def move_out(session: ReviewSession, cluster: Cluster, pair_id: int) -> bool:
    """Move one member out of ``cluster`` (``split`` keeping every other member)."""
    return split(session, cluster, [i for i in cluster.ids if i != pair_id])


def mark_shared_all(session: ReviewSession, groups: Sequence[Cluster | Sequence[int]]) -> bool:
    """Mark every one of ``groups`` "distinct questions on shared evidence" in ONE step (one
    ``session.undo`` takes them all back); False when every pair already was marked.

    Raises:
        WorkspaceError: the workspace is read-only.
    """
    return session.mark_shared_evidence_groups([list(g.ids if isinstance(g, Cluster) else g) for g in groups])


def unresolved(session: ReviewSession, clusters: Iterable[Cluster]) -> list[Cluster]:
    """The clusters with more than one member not rejected (largest first)."""
    return neardup.unresolved(clusters, session.status)
