"""The review screen's keys: one binding per action, each with an id the ``[keys]`` table of the
config file can rebind; the footer, the help screen and the command palette are made from them."""

from __future__ import annotations

from textual.binding import Binding


def _key(key: str, action: str, description: str, **options) -> Binding:
    """One of the review screen's keys: a priority binding (see ``BINDINGS``)."""
    return Binding(key, action, description, priority=True, **options)


#: Every key but escape is a priority binding (``_key``): it reaches its action as soon as the
#: app reads it, instead of going first to the focused source viewer and bubbling up through its
#: containers (a message hop each, about 1.4 ms a key at 160x48: README, Performance); the arrows
#: and pages also move between pairs while the source viewer has focus, and the keys typed right
#: after `e` go to the dialog. ``ReviewScreen.check_action`` hands every key to a focused text
#: input.
BINDINGS = [
    _key("a", "accept", "accept", id="accept"),
    _key("x", "reject", "reject", id="reject"),
    _key("space", "skip", "skip", id="skip"),
    _key("f", "flag", "flag", id="flag"),
    _key("u,backspace", "undo", "undo", id="undo"),
    _key("j,down", "next", "next", id="next", show=False),
    _key("k,up", "previous", "prev", id="previous", show=False),
    _key("n", "next_undecided", "undecided", id="next_undecided"),
    _key("e", "edit", "edit", id="edit"),
    _key("slash", "search", "search", id="search"),
    _key("v", "cycle_filter", "filter", id="filter", show=False),
    _key("V", "filter_bar", "filter bar", show=False, id="filter_bar"),
    _key("full_stop", "match_step(1)", "next match", show=False, id="next_match"),
    _key("comma", "match_step(-1)", "previous match", show=False, id="previous_match"),
    _key("B", "bulk", "bulk action", show=False, id="bulk"),
    _key("question_mark", "help", "help", id="help"),
    _key("q", "quit", "quit", id="quit"),
    _key("pagedown", "source_page(1)", "source page down", show=False, id="source_page_down"),
    _key("pageup", "source_page(-1)", "source page up", show=False, id="source_page_up"),
    _key("c", "centre", "centre passage", show=False, id="centre"),
    _key("right_square_bracket,shift+down", "panel_page(1)", "panel down", show=False, id="panel_down"),
    _key("left_square_bracket,shift+up", "panel_page(-1)", "panel up", show=False, id="panel_up"),
    _key("s", "snap", "snap", id="snap"),
    _key("t", "trim", "trim", show=False, id="trim"),
    _key("m", "select_span", "select span", show=False, id="select_span"),
    _key("z", "shrink", "shrink", show=False, id="shrink"),
    _key("Z", "shrink_llm", "LLM shrink", show=False, id="shrink_llm"),
    _key("o", "fit_chunk", "fit in one chunk", show=False, id="fit_chunk"),
    _key("b", "chunk_bounds", "chunk boundaries", show=False, id="chunk_bounds"),
    _key("g", "gate", "check", id="gate"),
    _key("d", "cluster", "similar", id="cluster"),
    _key("D", "dedup", "dedup", id="dedup"),
    _key("S", "shared_passage", "shared passages", show=False, id="shared_passage"),
    _key("P", "publish", "publish", id="publish"),
    _key("r", "regenerate", "regen", id="regenerate"),
    _key("G", "generate_more", "generate more", show=False, id="generate_more"),
    _key("L", "semantic_dedup", "LLM dedup", show=False, id="semantic_dedup"),
    _key("w", "toggle_window", "chunk window", show=False, id="window"),
    _key("i", "repair_chunk_index", "repair chunk_index", show=False, id="repair_chunk_index"),
    _key("I", "repair_all_chunk_indexes", "repair every chunk_index", show=False, id="repair_all_chunk_indexes"),
    _key("T", "stats", "statistics", show=False, id="stats"),
    _key("C", "team", "team", show=False, id="team"),
    _key("F", "findability", "findability", show=False, id="findability"),
    _key("N", "note", "note", show=False, id="note"),
    _key("H", "hand_pair", "new pair by hand", show=False, id="hand_pair"),
    # not priority: escape goes to the focused widget first (it closes what is open there).
    Binding("escape", "cancel_findability", "cancel findability run", show=False, id="cancel_findability"),
]
