"""The edit dialog: question, answer and supporting passage, edited in place."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TextArea

from mtcb_curate.errors import CurateError
from mtcb_curate.store.session import PairView
from mtcb_curate.tui.changes import ChangeResult, run_change
from mtcb_curate.tui.keys import KEYS_WAIT_S, keys_handled
from mtcb_curate.tui.widgets.plain_text_area import PlainTextArea, restore_line_breaks

FIELDS = (("question", "Question"), ("answer", "Answer"), ("supporting_passage", "Supporting passage"))

# What a failed save can raise: the workspace's own errors (a storage fault, SQLite's or the
# file system's, arrives as a ``WorkspaceError``) and an unknown field.
SAVE_ERRORS = (CurateError, ValueError)
# The longest ctrl+s waits for the keys typed before it to be handled, in seconds.
#: At this many columns or more the dialog takes the left half of the terminal and the screen
#: below shows its source document whole in the right half (``beside``/``editing`` classes,
#: styles/app.tcss), so the passage can be read while it is edited.
BESIDE_MIN_COLUMNS = 120


class EditScreen(ModalScreen[dict[str, str] | None]):
    """Edit the question, answer and passage of one pair.

    ``ctrl+s`` saves and closes; the result is {field: new text} for the fields whose text
    changed (empty when none did), or None on escape. A field keeps its own line breaks: the
    editor's lines are mapped back onto the original breaks (``restore_line_breaks``), so an
    untouched field comes back byte-identical and is not in the result.

    ``save``, when given, is called with that dict (only when it is not empty) before the dialog
    closes, as a change of the app's (``tui.changes.run_change``: on a shared workspace whose
    server does not answer at once, the dialog stays open and the keys typed meanwhile wait
    until it is saved). If it raises one of ``SAVE_ERRORS`` (a full disk, a closed workspace, a
    server that did not come back), the dialog stays open with the text as typed and one line
    saying what happened; ``ctrl+s`` retries.

    Keys typed fast all land, in order: Textual's ``push_screen`` holds the app's queue until the
    dialog is mounted and ``on_mount`` has focused an area (the review's ``e`` is a priority
    binding, so the dialog opens as ``e`` is read, before the next key), and ``ctrl+s`` waits
    until every area has handled the keys already handed to it (the app hands keys over without
    waiting); the keys typed after ctrl+s (or escape) go to the review screen. Each area runs its own
    bindings (``PlainTextArea``), and ``tab`` moves the focus as it is read. ``focus_field`` picks the area that has the
    cursor first (default: the question).
    """

    AUTO_FOCUS = None  # ``on_mount`` focuses ``focus_field``
    BINDINGS = [
        Binding("ctrl+s", "save", "save", priority=True),
        Binding("escape", "cancel", "cancel", priority=True),
        # priority: the focus moves when tab is typed, not when the area before it gets to it,
        # so the keys after a tab land in the next field.
        Binding("tab", "next_field(1)", "next field", priority=True, show=False),
        Binding("shift+tab", "next_field(-1)", "previous field", priority=True, show=False),
    ]

    def __init__(self, view: PairView, focus_field: str = "question",
                 save: Callable[[dict[str, str]], object] | None = None) -> None:
        super().__init__()
        self.view = view
        self.focus_field = focus_field
        self.save = save
        self.originals = {"question": view.question, "answer": view.answer, "supporting_passage": view.passage}

    def compose(self) -> ComposeResult:
        with Vertical(id="edit-dialog", classes="dialog"):
            yield Static(f"Edit pair #{self.view.pair.id}   ctrl+s save · esc cancel · tab next field",
                         markup=False, id="edit-title")
            for name, label in FIELDS:
                yield Label(label, markup=False, classes="edit-label")
                yield PlainTextArea(self.originals[name], id=f"edit-{name}", soft_wrap=True, tab_behavior="focus",
                                    classes="edit-area")
            yield Static("", markup=False, id="edit-status")

    def on_mount(self) -> None:
        self._fit_layout()
        self.set_focus(self.query_one(f"#edit-{self.focus_field}", TextArea))

    def _fit_layout(self) -> None:
        """Beside the source at >= ``BESIDE_MIN_COLUMNS`` columns (this screen's ``beside``
        class, the screen below's ``editing`` class), else centred over it."""
        beside = self.app.size.width >= BESIDE_MIN_COLUMNS
        self.set_class(beside, "beside")
        below = self._below()
        if below is not None:
            below.set_class(beside, "editing")

    def _below(self):
        """The screen this dialog was pushed over, or None."""
        stack = self.app.screen_stack
        return stack[stack.index(self) - 1] if self in stack and stack.index(self) > 0 else None

    def on_resize(self) -> None:
        self._fit_layout()

    def on_unmount(self) -> None:
        for screen in self.app.screen_stack:
            screen.remove_class("editing")

    def _areas(self) -> list[TextArea]:
        return [self.query_one(f"#edit-{name}", TextArea) for name, _ in FIELDS]

    async def _typed_keys_done(self) -> None:
        """Return once every key already handed to a field has been handled (``keys_handled``)."""
        await keys_handled(self._areas(), KEYS_WAIT_S)

    def action_next_field(self, direction: int) -> None:
        if direction > 0:
            self.focus_next()
        else:
            self.focus_previous()

    def changes(self) -> dict[str, str]:
        """{field: text} for the fields whose text differs from what the dialog opened with,
        each with its original line breaks kept where its lines are unchanged."""
        out = {}
        for name, _ in FIELDS:
            area = self.query_one(f"#edit-{name}", TextArea)
            text = restore_line_breaks(self.originals[name], area.document.lines)
            if text != self.originals[name]:
                out[name] = text
        return out

    async def action_save(self) -> None:
        # The app awaits this priority action before it reads the next key, so the keys typed
        # after ctrl+s wait in its queue and go to the review screen once the dialog has closed.
        await self._typed_keys_done()
        if not self.is_attached or self.app.screen is not self:
            return  # closed meanwhile
        changes = self.changes()
        if not changes or self.save is None:
            self.dismiss(changes)
            return
        save = self.save
        # through the app's changes (``tui.changes``): on a shared workspace whose server does
        # not answer at once the dialog stays open, the screen says so, and closes once saved
        run_change(self.app, lambda: save(changes), what=f"the edit of #{self.view.pair.id}",
                   then=lambda result: self._saved(result, changes))

    def _saved(self, result: ChangeResult, changes: dict[str, str]) -> None:
        """The save is done: close, or stay open with the text as typed and one line saying why."""
        try:
            result.get()
        except SAVE_ERRORS as exc:
            status = self.query_one("#edit-status", Static)
            reason = " ".join(str(exc).split()) or type(exc).__name__
            status.update(Text(f"Not saved: {reason}. The text is kept: ctrl+s tries again, esc discards it."))
            status.display = True
            return
        if self.is_attached and self.app.screen is self:
            self.dismiss(changes)

    async def action_cancel(self) -> None:
        # As ctrl+s: the keys typed after escape go to the review screen once the dialog is closed.
        await self._typed_keys_done()
        if self.is_attached and self.app.screen is self:
            self.dismiss(None)
