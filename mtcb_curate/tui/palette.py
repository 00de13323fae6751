"""Command palette (``ctrl+p``) entries for the review screen's rarer actions.

Each entry names an action of :class:`~mtcb_curate.tui.screens.review.ReviewScreen` and shows
its key as bound now (``[keys]`` of the config file), or ``palette only``: the queue views
(filters), the near-duplicate list, the shared-passage list, the checklist, publish, generate
more, semantic dedup, export and help. Every other binding of the review screen gets an entry
generated from the bindings list (:func:`entries`: its description and key), so the palette lists
every action with its key and nothing bound is missing. Entries appear only while the review
screen is the one the palette was opened from (its dialogs have their own keys).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from mtcb_curate.app.bulk import ACTIONS
from mtcb_curate.dataset.model import Status

if TYPE_CHECKING:
    from mtcb_curate.tui.app import CurateApp
    from mtcb_curate.tui.screens.review import ReviewScreen


@dataclass(frozen=True)
class Entry:
    """One palette entry: ``name`` (what is matched), ``binding_id`` (the review screen's
    binding whose key is shown; None: palette only), ``help`` (one line) and ``run`` (called
    with the review screen)."""

    name: str
    binding_id: str | None
    help: str
    run: Callable[[ReviewScreen], None]


def _view(status: Status | None) -> Callable[[ReviewScreen], None]:
    return lambda screen: screen.show_view(status)


def _bulk(action: str) -> Callable[[ReviewScreen], None]:
    return lambda screen: screen.run_bulk(action)


ENTRIES: tuple[Entry, ...] = (
    *(Entry(f"View: {'all pairs' if s is None else s.value + ' pairs'}", "filter",
            "show only these pairs in the queue", _view(s))
      for s in (None, Status.UNDECIDED, Status.ACCEPTED, Status.REJECTED, Status.SKIPPED, Status.FLAGGED)),
    Entry("Near-duplicates: list every cluster", "dedup", "unresolved near-duplicate clusters, largest first",
          lambda s: s.action_dedup()),
    Entry("Shared passages: different questions on one passage", "shared_passage",
          "groups sharing evidence; n marks one distinct questions on shared evidence",
          lambda s: s.action_shared_passage()),
    Entry("Statistics: coverage, lengths, question forms", "stats",
          "the set's shape over the current view, each plot with its numbers", lambda s: s.action_stats()),
    Entry("Team: curators, agreement and conflicts", "team",
          "each curator's counts and pace, Cohen's kappa and Krippendorff's alpha; a lead decides conflicts",
          lambda s: s.action_team()),
    Entry("Findability: chunk the corpus and score every pair", "findability",
          "MTCB's chunkers and BM25 on every pair (cached; esc cancels); the QA panel's ◇ lines",
          lambda s: s.action_findability()),
    Entry("Checklist: run the quality checks", "gate", "the publish gate's checks, with the pairs they flag",
          lambda s: s.action_gate()),
    Entry("Publish to the Hub", "publish", "the changes first, then a confirmation (behind the checklist)",
          lambda s: s.action_publish()),
    Entry("Generate more pairs for this document", "generate_more", "ask the LLM for N new pairs",
          lambda s: s.action_generate_more()),
    Entry("Generate pairs for every document of the current view", None,
          "the LLM, N new pairs per document (least covered first); estimate and confirm first; resumable",
          lambda s: s.action_generate_view()),
    Entry("Failed LLM attempts of this session", None,
          "every refused reply: its full reasons and the passage the model quoted",
          lambda s: s.action_llm_attempts()),
    Entry("Semantic dedup by the LLM", "semantic_dedup", "LLM clusters join the near-duplicates",
          lambda s: s.action_semantic_dedup()),
    Entry("Repair chunk_index of this pair", "repair_chunk_index",
          "set it to the MTCB window (8,192 tokens) holding the passage", lambda s: s.action_repair_chunk_index()),
    Entry("Repair chunk_index of every pair", "repair_all_chunk_indexes",
          "every pair whose window does not hold its passage; asks once, one undo",
          lambda s: s.action_repair_all_chunk_indexes()),
    Entry("chunk_index means something else: ignore it (toggle)", None,
          "the links check stops (or starts again) comparing chunk_index with MTCB's windows",
          lambda s: s.toggle_chunk_index_meaning()),
    Entry("Shrink the passage (lexical)", "shrink",
          "the shortest run of sentences, lines or table rows still holding the answer; accept, edit or refuse",
          lambda s: s.action_shrink()),
    Entry("Shrink the passage with the LLM", "shrink_llm",
          "the LLM's minimal exact quote of the passage, accepted only verbatim", lambda s: s.action_shrink_llm()),
    Entry("Export decisions as JSON Lines", None, "one line per pair, written to the workspace folder",
          lambda s: s.action_export()),
    Entry("Scroll the QA panel down a page", "panel_down", "the panel's last row says how many lines are hidden",
          lambda s: s.action_panel_page(1)),
    Entry("Scroll the QA panel up a page", "panel_up", "back towards the head line and the verdict",
          lambda s: s.action_panel_page(-1)),
    Entry("Filter the queue: the filter bar", "filter_bar",
          "status, verdict, check, document, edited, generated, by hand, note, text or /regex/",
          lambda s: s.action_filter_bar()),
    Entry("Next text match in the source", "next_match", "the filter's text query, highlighted",
          lambda s: s.action_match_step(1)),
    Entry("Previous text match in the source", "previous_match", "the filter's text query, highlighted",
          lambda s: s.action_match_step(-1)),
    Entry("Bulk action on the view: menu", "bulk", "every action with the pairs it touches; asks once, one undo",
          lambda s: s.action_bulk()),
    *(Entry(f"Bulk on the view: {label}", None, "every pair of the current view; asks once, one undo",
            _bulk(action)) for action, (label, _slow) in ACTIONS.items()),
    Entry("Help: every key", "help", "the keys as bound now", lambda s: s.action_help()),
)


def _run_binding(action: str) -> Callable[[ReviewScreen], None]:
    return lambda screen: screen.call_later(screen.run_action, action)


def entries() -> tuple[Entry, ...]:
    """:data:`ENTRIES`, then one entry per review-screen binding none of them names (its
    description, capitalised, runs its action), in the bindings' order."""
    from mtcb_curate.tui.screens.review import BINDINGS

    named = {e.binding_id for e in ENTRIES}
    generated = tuple(Entry(b.description[:1].upper() + b.description[1:], b.id, f"the {b.id} action",
                            _run_binding(b.action))
                      for b in BINDINGS if b.id and b.id not in named)
    return ENTRIES + generated


def key_of(app: CurateApp, binding_id: str | None) -> str:
    """The key(s) bound to the review screen's ``binding_id`` now, as shown to the curator."""
    from mtcb_curate.tui.screens.review import BINDINGS

    if binding_id is None:
        return "palette only"
    default = next((b.key for b in BINDINGS if b.id == binding_id), "")
    keys = app.keymap.get(binding_id, default)
    return "key: " + keys.replace("question_mark", "?").replace("slash", "/").replace(
        "left_square_bracket", "[").replace("right_square_bracket", "]").replace("full_stop", ".").replace(
        "comma", ",")


class ReviewCommands(Provider):
    """The entries of :data:`ENTRIES`, run on the review screen the palette was opened over."""

    def _review(self) -> ReviewScreen | None:
        from mtcb_curate.tui.screens.review import ReviewScreen

        return self.screen if isinstance(self.screen, ReviewScreen) else None

    def _hits(self):
        review = self._review()
        if review is None:
            return
        app = cast("CurateApp", self.app)
        for entry in entries():
            yield entry, f"{entry.help} · {key_of(app, entry.binding_id)}", _bound(entry, review)

    async def discover(self) -> Hits:
        for entry, help_text, run in self._hits():
            yield DiscoveryHit(entry.name, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry, help_text, run in self._hits():
            score = matcher.match(entry.name)
            if score > 0:
                yield Hit(score, matcher.highlight(entry.name), run, text=entry.name, help=help_text)


def _bound(entry: Entry, review: ReviewScreen) -> Callable[[], None]:
    return lambda: entry.run(review)
