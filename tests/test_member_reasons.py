"""The set-wide checks' per-pair reasons for groups of pairs (``checks.base.MemberReasons``): made
from the group when read, equal to the dict of the same lines, and left out pair by pair
without being made."""

from __future__ import annotations

from dataclasses import dataclass

from mtcb_curate import neardup
from mtcb_curate.checks.base import MemberReasons, without_pairs
from mtcb_curate.checks.passages import SHARED_IDS_SHOWN, shared_passage_result
from mtcb_curate.checks.questions import duplicates_result


@dataclass
class Group:
    ids: tuple[int, ...]
    reason: str

    @property
    def size(self) -> int:
        return len(self.ids)


def test_reasons_read_as_the_dict_filled_group_by_group_a_pair_in_two_taking_the_last():
    made: list[int] = []

    def line(group: Group, pid: int) -> str:
        made.append(pid)
        return f"{group.reason} {pid} of {group.ids}"

    groups = [Group((4, 1, 7), "a"), Group((2, 7), "b")]
    reasons = MemberReasons(groups, line)
    assert made == []  # nothing made until read
    expected = {4: "a 4 of (4, 1, 7)", 1: "a 1 of (4, 1, 7)", 7: "b 7 of (2, 7)", 2: "b 2 of (2, 7)"}
    assert list(reasons) == [4, 1, 7, 2] and len(reasons) == 4
    assert reasons == expected and expected == reasons and dict(reasons) == expected
    assert 7 in reasons and 3 not in reasons and reasons.get(3) is None
    assert repr(reasons) == repr(expected)

    fewer = without_pairs(reasons, {1, 2})
    assert isinstance(fewer, MemberReasons)
    assert fewer == {4: "a 4 of (4, 1, 7)", 7: "b 7 of (2, 7)"}
    assert reasons == expected  # the original is unchanged
    assert without_pairs(dict(expected), {1}) == {k: v for k, v in expected.items() if k != 1}


def test_duplicates_name_every_other_member_and_shared_passages_the_first_few():
    items = [(i, "DOC", "What was the company's total revenue in 2023?", "12", f"passage {i}") for i in range(3)]
    items.append((3, "DOC", "Who audits the financial statements of the firm?", "EY", "passage 3"))
    clusters = neardup.find_clusters(items)
    assert [c.ids for c in clusters] == [(0, 1, 2)]
    r = duplicates_result(clusters, 0.9)
    reason = clusters[0].reason
    assert dict(r.reasons) == {0: f"{reason} with #1, #2", 1: f"{reason} with #0, #2", 2: f"{reason} with #0, #1"}
    assert r.pairs == [0, 1, 2] and r.failing == {0, 1, 2}
    assert r.to_dict()["reasons"] == {"0": f"{reason} with #1, #2", "1": f"{reason} with #0, #2",
                                      "2": f"{reason} with #0, #1"}

    big = Group(tuple(range(10, 10 + SHARED_IDS_SHOWN + 3)), "same passage")
    shared = shared_passage_result([big])
    others = ", ".join(f"#{o}" for o in big.ids[1:1 + SHARED_IDS_SHOWN])
    assert shared.reasons[10] == f"same passage with {others} and 2 more"
    assert len(shared.reasons) == len(big.ids) and not shared.failing
