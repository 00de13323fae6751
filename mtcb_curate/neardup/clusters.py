"""Near-duplicate clusters: the compared items, the links between them, the clusters, and how
a curator settles one (keep one, reject the others as duplicates; or "not duplicates").

A :class:`Cluster` is a star of the links :func:`~mtcb_curate.neardup.blocking.find_clusters`
found (every member linked directly to its centre; shared-passage groups: a connected
component), minus the pairs a curator marked "not duplicates".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from mtcb_curate.dataset.model import PASSAGE_FIELD, Dataset, Status
from mtcb_curate.neardup.similarity import _BIT, _DUPLICATE_OF, DUPLICATE_REASON_FORMAT, REASONS

class Item(NamedTuple):
    """One QA pair as the near-duplicate search sees it (a plain tuple works too).

    Attributes:
        id: the pair id (its 0-based row in the questions config).
        doc_key: the document key ('' when missing; '' is then one document like any other).
        question, answer, passage: the current texts (edits applied); ``passage`` is the
            supporting passage.
    """

    id: int
    doc_key: str
    question: str
    answer: str
    passage: str


@dataclass(frozen=True, slots=True)
class Link:
    """Why two QA pairs were raised together.

    Attributes:
        a, b: pair ids, ``a < b``.
        reasons: the reasons that hold for this pair, in ``REASONS`` order.
        score: question similarity of the two (0-100, one decimal), whatever the reason.
    """

    a: int
    b: int
    reasons: tuple[str, ...]
    score: float


#: How a cluster keeps its links: pair ids ``a < b``, reason bits (``REASONS`` order) and the
#: question similarity, one row per link (32 bytes, where ``Link`` objects would take ~200).
_LINK_DTYPE = np.dtype([("a", np.int64), ("b", np.int64), ("bits", np.int64), ("score", np.float64)])


@dataclass(frozen=True, slots=True, eq=False)
class Cluster:
    """A group of near-duplicate QA pairs: a star around a centre of the links (a shared-passage
    group: a connected component).

    Two clusters are equal when they have the same members, reasons and document keys.

    Attributes:
        ids: member pair ids, ascending (at least two).
        reasons: every reason on its links, in ``REASONS`` order.
        doc_keys: the members' document keys, sorted, without repeats.
        links (property): the raised links among the members, ``Link``s by ids ascending.
        scores (property): ``(a, b, score)`` question similarity (0-100, one decimal) for every
            pair of members when there are at most ``PAIRWISE_MAX`` of them, else for the links
            only.
    """

    ids: tuple[int, ...]
    reasons: tuple[str, ...]
    doc_keys: tuple[str, ...]
    link_table: np.ndarray = field(repr=False)
    pairwise: tuple[tuple[int, int, float], ...] | None = field(default=None, repr=False)
    #: The members' scored questions (words sorted, '' when empty), in ``ids`` order: with at
    #: most ``PAIRWISE_MAX`` members, ``scores`` computes every pair from them on first use.
    scored: tuple[str, ...] | None = field(default=None, repr=False, compare=False)
    #: The rows of ``link_table`` by member (``member_rows``: made on first use).
    member_index: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cluster):
            return NotImplemented
        return (self.ids, self.reasons, self.doc_keys) == (other.ids, other.reasons, other.doc_keys)

    def __hash__(self) -> int:
        return hash((self.ids, self.reasons, self.doc_keys))

    @property
    def size(self) -> int:
        """Number of members."""
        return len(self.ids)

    @property
    def link_count(self) -> int:
        """Number of raised links (without building them)."""
        return len(self.link_table)

    @property
    def links(self) -> tuple[Link, ...]:
        """The raised links, ``Link``s ordered by (a, b); built on each call."""
        t = self.link_table
        return tuple(map(Link, t["a"].tolist(), t["b"].tolist(), map(_reason_names, t["bits"].tolist()),
                         t["score"].tolist()))

    @property
    def scores(self) -> tuple[tuple[int, int, float], ...]:
        """``(a, b, score)``: every pair of members when ``PAIRWISE_MAX`` or fewer, else the links."""
        pairwise = self._pairwise()
        if pairwise is not None:
            return pairwise
        t = self.link_table
        return tuple(zip(t["a"].tolist(), t["b"].tolist(), t["score"].tolist()))

    def _pairwise(self) -> tuple[tuple[int, int, float], ...] | None:
        if self.pairwise is not None or self.scored is None:
            return self.pairwise
        from rapidfuzz import fuzz, process

        matrix = process.cdist(self.scored, self.scored, scorer=fuzz.ratio, dtype=np.float32)
        empty = np.array([not q for q in self.scored])
        matrix[empty] = 0
        matrix[:, empty] = 0
        x, y = np.triu_indices(len(self.ids), 1)
        ids = self.ids
        pairwise = tuple(zip((ids[k] for k in x.tolist()), (ids[k] for k in y.tolist()),
                             np.round(matrix[x, y].astype(np.float64), 1).tolist()))
        object.__setattr__(self, "pairwise", pairwise)
        return pairwise

    @property
    def across_documents(self) -> bool:
        """True when the members belong to more than one document."""
        return len(self.doc_keys) > 1

    @property
    def reason(self) -> str:
        """The reasons as one line, joined with ``; ``."""
        return "; ".join(self.reasons)

    def closest(self, pair_id: int, k: int = 3) -> list[tuple[int, float]]:
        """The ``k`` members most similar to ``pair_id``: ``(id, score)``, highest score first
        (ties: lower id first), from ``scores``.

        Raises:
            KeyError: ``pair_id`` is not a member.
        """
        if pair_id not in self.ids:
            raise KeyError(pair_id)
        pairwise = self._pairwise()
        if pairwise is not None:
            rows = [(b if a == pair_id else a, sc) for a, b, sc in pairwise if pair_id in (a, b)]
        else:
            t = self.link_table
            sel = t[(t["a"] == pair_id) | (t["b"] == pair_id)]
            other = np.where(sel["a"] == pair_id, sel["b"], sel["a"])
            rows = list(zip(other.tolist(), sel["score"].tolist()))
        return sorted(rows, key=lambda kv: (-kv[1], kv[0]))[:k]

    def linked(self, pair_id: int) -> list[tuple[int, tuple[str, ...], float]]:
        """The members linked to ``pair_id`` directly (not only through others):
        ``(id, reasons, score)``, highest question similarity first (ties: lower id first).
        Empty when ``pair_id`` is not a member."""
        members, bounds, rows = self.member_rows()
        k = int(np.searchsorted(members, pair_id))
        if k == len(members) or members[k] != pair_id:
            return []
        sel = self.link_table[rows[bounds[k]:bounds[k + 1]]]
        other = np.where(sel["a"] == pair_id, sel["b"], sel["a"])
        found = list(zip(other.tolist(), map(_reason_names, sel["bits"].tolist()), sel["score"].tolist()))
        return sorted(found, key=lambda r: (-r[2], r[0]))

    def member_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows of ``link_table`` by member, made once: ``(members, bounds, rows)`` where
        member ``members[k]`` (ascending ids) is in rows ``rows[bounds[k]:bounds[k + 1]]``.
        ``linked`` reads it for the pair on screen at every key; for a large cluster making it
        takes a sort of its links, which the review screen does in its worker, ahead."""
        index = self.member_index
        if index is None:
            t = self.link_table
            ends = np.concatenate([t["a"], t["b"]])
            order = np.argsort(ends, kind="stable")
            ends = ends[order]
            starts = np.flatnonzero(np.r_[True, ends[1:] != ends[:-1]]) if len(ends) else np.zeros(0, dtype=np.int64)
            index = (ends[starts], np.r_[starts, len(ends)], order % max(1, len(t)))
            object.__setattr__(self, "member_index", index)
        return index

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"ids", "scores": [[a, b, score], ...], "reason", "reasons",
        "doc_keys", "links": [{"a", "b", "reasons", "score"}, ...]}``."""
        return {
            "ids": list(self.ids),
            "scores": [[a, b, sc] for a, b, sc in self.scores],
            "reason": self.reason,
            "reasons": list(self.reasons),
            "doc_keys": list(self.doc_keys),
            "links": [{"a": x.a, "b": x.b, "reasons": list(x.reasons), "score": x.score} for x in self.links],
        }


def _reason_names(bits: int) -> tuple[str, ...]:
    return tuple(r for r in REASONS if bits & _BIT[r])


def items_from_dataset(dataset: Dataset, edits: Mapping[int, Mapping[str, str]] | None = None) -> list[Item]:
    """The dataset's pairs as ``Item``s, with the curator's edits applied.

    Args:
        dataset: the loaded dataset.
        edits: pair id -> {field: new text} as ``Workspace.edits()`` returns it (fields
            ``question``, ``answer``, ``supporting_passage``); missing fields keep the source.
    """
    edits = edits or {}
    out = []
    for p in dataset.pairs:
        e = edits.get(p.id, {})
        out.append(Item(p.id, p.doc_key, e.get("question", p.question), e.get("answer", p.answer),
                        e.get(PASSAGE_FIELD, p.passage)))
    return out


def passage_spans(dataset: Dataset, items: Iterable[Item] | None = None,
                  known: Mapping[int, tuple[int, int] | None] | None = None) -> dict[int, tuple[int, int]]:
    """Where each verbatim supporting passage is in its document: id -> (start, end)
    character offsets of the first occurrence (end exclusive). Passages that are empty, not
    verbatim, or whose document key matches no document are left out.

    Args:
        dataset: gives the document texts.
        items: the pairs to locate (edited texts), by default ``items_from_dataset(dataset)``.
        known: id -> the first occurrence, or None for "not verbatim in its document", for
            items already located (a verification's ``exact`` results, for exactly these
            texts); only the others are searched.

    Cost: one ``str.find`` per pair searched, over its document (about 1 ms per MB of document).
    """
    out = {}
    known = known or {}
    for it in items if items is not None else items_from_dataset(dataset):
        if it.id in known:
            span = known[it.id]
            if span is not None:
                out[it.id] = span
            continue
        doc = dataset.documents.get(it.doc_key)
        if doc is None:
            continue
        start = doc.text.find(it.passage) if it.passage else -1
        if start >= 0:
            out[it.id] = (start, start + len(it.passage))
    return out


#: The workspace metadata key under which the LLM's semantic dedup clusters are stored (a JSON
#: list of member-id lists, the kept question first).
LLM_CLUSTERS_KEY = "llm_dedup_clusters"


def llm_links(raw: str | None, n: int) -> list[tuple[int, int]]:
    """The links of the stored LLM dedup clusters (``raw``: the JSON under ``LLM_CLUSTERS_KEY``,
    or None): each duplicate linked to its cluster's kept question, ids in ``0..n-1`` only.
    Unreadable JSON gives no links."""
    return [(g[0], other) for g in llm_groups(raw, n) if g for other in g[1:]]


def llm_groups(raw: str | None, n: int) -> list[list[int]]:
    """The stored LLM dedup clusters (member ids, kept id first; ids outside ``0..n-1`` left
    out); ``[]`` for None or unreadable JSON."""
    if not raw:
        return []
    try:
        groups = json.loads(raw)
    except ValueError:
        return []
    if not isinstance(groups, list):
        return []
    return [[int(i) for i in g if 0 <= int(i) < n] for g in groups if isinstance(g, list)]


def cluster_index(clusters: Iterable[Cluster]) -> dict[int, Cluster]:
    """Pair id -> the cluster it belongs to (for the ``≈N similar`` badge: ``size - 1``)."""
    return {i: c for c in clusters for i in c.ids}


def duplicate_reason(kept_id: int) -> str:
    """The rejection reason for a pair rejected as a duplicate of ``kept_id``: ``duplicate of #12``."""
    return DUPLICATE_REASON_FORMAT.format(int(kept_id))


def kept_id_of(reason: str | None) -> int | None:
    """The kept pair's id in a ``duplicate_reason``, or None for any other reason."""
    m = _DUPLICATE_OF.match(reason or "")
    return int(m.group(1)) if m else None


def keep_one(cluster: Cluster, keep_id: int) -> list[tuple[int, str]]:
    """The decisions that settle ``cluster`` by keeping ``keep_id``: ``(id, reason)`` for every
    other member, each to be rejected with ``duplicate_reason(keep_id)``.

    Raises:
        KeyError: ``keep_id`` is not a member.
    """
    if keep_id not in cluster.ids:
        raise KeyError(keep_id)
    reason = duplicate_reason(keep_id)
    return [(i, reason) for i in cluster.ids if i != keep_id]


def not_duplicate_pairs(cluster: Cluster) -> list[tuple[int, int]]:
    """Every pair of members ``(a, b)``, ``a < b``: what to remember when the curator marks the
    cluster "not duplicates", so that none of them is linked again at any threshold."""
    m = cluster.ids
    return [(m[i], m[j]) for i in range(len(m)) for j in range(i + 1, len(m))]


def split_pairs(cluster: Cluster, keep: Iterable[int]) -> list[tuple[int, int]]:
    """What to remember to split ``cluster``: every pair (kept member, member moved out), ids
    ascending, to mark "not duplicates". The kept members stay one cluster; the members moved
    out are never raised with them again (at any threshold), and stay linked among themselves
    when they ask one question. Moving one member out is ``keep`` = every other member.

    Raises:
        ValueError: ``keep`` holds a non-member, or keeps no member or every member (nothing to
            split).
    """
    kept = set(keep)
    members = set(cluster.ids)
    if not kept <= members:
        raise ValueError(f"not members of the cluster: {sorted(kept - members)}")
    if not kept or kept == members:
        raise ValueError("a split keeps some members and moves the others out")
    out = [(min(a, b), max(a, b)) for a in sorted(kept) for b in sorted(members - kept)]
    return sorted(out)


def is_resolved(cluster: Cluster, status_of: Callable[[int], Status | str]) -> bool:
    """True when at most one member is not rejected (one kept, the others rejected).

    Args:
        status_of: pair id -> its status (``ReviewSession.status`` fits).
    """
    live = sum(1 for i in cluster.ids if Status(status_of(i)) is not Status.REJECTED)
    return live <= 1


def unresolved(clusters: Iterable[Cluster], status_of: Callable[[int], Status | str]) -> list[Cluster]:
    """The clusters that are not ``is_resolved``, in their given order (largest first)."""
    return [c for c in clusters if not is_resolved(c, status_of)]


def clusters_json(clusters: Iterable[Cluster], status_of: Callable[[int], Status | str] | None = None) -> dict:
    """The headless report: ``{"clusters": [Cluster.to_dict() ...]}``; with ``status_of``, each
    cluster also has ``"resolved": bool`` and each member's status under ``"statuses"``."""
    out = []
    for c in clusters:
        d = c.to_dict()
        if status_of is not None:
            d["resolved"] = is_resolved(c, status_of)
            d["statuses"] = {str(i): Status(status_of(i)).value for i in c.ids}
        out.append(d)
    return {"clusters": out}
