"""Folding several SQLite workspaces of the same source into one (``mtcb-curate merge``): for a
team without a database server, each curator reviews in their own workspace and a lead merges.

Rules (the same as on a shared workspace, ``store.team``):

- decisions: every workspace's decision is kept as that curator's vote; a pair decided in one
  workspace, or in several that agree (``store.team.votes_agree``), gets that decision; pairs on
  which they disagree stay undecided, as conflicts, until a lead decides them (``team
  --resolve``, or the app's team screen); the ``conflicts`` check fails meanwhile;
- a workspace's curator is the name most of its history entries carry, else its folder name;
- edits and notes: where workspaces differ on a field (or a note), the most recent change wins
  and is counted in ``differing``;
- "not duplicates" and "shared evidence" marks: their union;
- added pairs: the same id must hold the same pair in every workspace that has it, else the
  merge is refused before anything is written.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from mtcb_curate.dataset.model import HistoryKind
from mtcb_curate.errors import WorkspaceError
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.store.sqlite import Workspace


def read_inputs(folders: list[Path]) -> list[tuple[str, Workspace]]:
    """Open every folder read-only, check they hold workspaces of the same dataset and questions,
    and name each one's curator. The caller closes them.

    Raises:
        WorkspaceError: a folder holds no workspace, or one made for other data.
    """
    opened: list[tuple[str, Workspace]] = []
    try:
        for folder in folders:
            if not Workspace.exists(folder):
                raise WorkspaceError(f"{folder}: no workspace here to merge")
            ws = Workspace.open(folder, read_only=True)
            opened.append(("", ws))
        first = opened[0][1]
        for _, ws in opened[1:]:
            if (ws.get_meta("dataset"), ws.get_meta("fingerprint")) != (first.get_meta("dataset"),
                                                                           first.get_meta("fingerprint")):
                raise WorkspaceError(f"{ws.path}: made for other questions than {first.path}; only workspaces of "
                                     f"the same source merge")
        named: list[tuple[str, Workspace]] = []
        taken: Counter = Counter()
        for _, ws in opened:
            who = Counter(ws.history_curators().values()).most_common(1)
            name = who[0][0] if who else Path(ws.path).name
            taken[name] += 1
            named.append((name if taken[name] == 1 else f"{name} ({taken[name]})", ws))
        return named
    except BaseException:
        for _, ws in opened:
            ws.close()
        raise


def merge_into(session: ReviewSession, inputs: list[tuple[str, Workspace]]) -> dict[str, Any]:
    """Write the merge of ``inputs`` (from ``read_inputs``) into ``session``'s workspace, which
    must hold nothing yet. Returns ``{"workspaces", "decided", "votes", "conflicts", "edits",
    "differing", "notes", "added", "marks"}`` (counts).

    Raises:
        WorkspaceError: the target already holds changes, or added pairs collide.
    """
    out = session.workspace
    if out.history(include_undone=True):
        raise WorkspaceError(f"{out.path}: the merge goes into a new workspace; this one already holds changes")
    added: dict[int, dict] = {}
    for name, ws in inputs:
        for pid, value in ws.added_pairs().items():
            if pid in added and added[pid] != value:
                raise WorkspaceError(f"{ws.path}: added pair {pid} differs from the one of another workspace; "
                                     f"nothing was merged")
            added.setdefault(pid, value)
    votes: dict[int, dict[str, tuple[str, str | None, float]]] = {}
    latest: dict[tuple[int, str], tuple[float, Any]] = {}
    notes: dict[int, tuple[float, str]] = {}
    differing = 0
    nd: set[tuple[int, int]] = set()
    se: set[tuple[int, int]] = set()
    for name, ws in inputs:
        for pid, d in ws.decisions().items():
            votes.setdefault(pid, {})[name] = (d.status, d.reason, d.at)
        when: dict[tuple[int, str], float] = {}
        for e in ws.history():
            if e.kind == HistoryKind.EDIT:
                for f in (e.after or {}):
                    when[(e.pair_id, f)] = e.at
            elif e.kind == HistoryKind.NOTE:
                when[(e.pair_id, "\0note")] = e.at
        for pid, fields in ws.edits().items():
            for f, v in fields.items():
                t = when.get((pid, f), 0.0)
                if (pid, f) in latest and latest[(pid, f)][1] != v:
                    differing += 1
                if (pid, f) not in latest or t > latest[(pid, f)][0]:
                    latest[(pid, f)] = (t, v)
        for pid, text in ws.notes().items():
            t = when.get((pid, "\0note"), 0.0)
            if pid in notes and notes[pid][1] != text:
                differing += 1
            if pid not in notes or t > notes[pid][0]:
                notes[pid] = (t, text)
        nd |= ws.not_duplicates()
        se |= ws.shared_evidence()
    for pid in sorted(set(added) - set(out.added_pairs())):
        out.add_pair(pid, added[pid], via="merge")
    edits: dict[int, dict[str, Any]] = {}
    for (pid, f), (_t, v) in latest.items():
        edits.setdefault(pid, {})[f] = v
    if edits:
        out.edit_many(edits, via="merge")
    for pid, (_t, text) in sorted(notes.items()):
        out.set_note(pid, text)
    if nd:
        out.mark_not_duplicates(nd)
    if se:
        out.mark_shared_evidence(se)
    seqs = out.add_votes(votes)
    return {"workspaces": len(inputs), "decided": len(seqs), "votes": sum(len(v) for v in votes.values()),
            "conflicts": len(out.conflicts()), "edits": sum(len(v) for v in edits.values()),
            "differing": differing, "notes": len(notes), "added": len(added), "marks": len(nd) + len(se)}
