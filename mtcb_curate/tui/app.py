"""The Textual app: one review screen over a ``ReviewSession``, keys rebindable by action id."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.app import App

from mtcb_curate.resources import styles_dir
from mtcb_curate.session import ReviewSession
from mtcb_curate.tui.memory import CHECK_SECONDS, CollectorPolicy
from mtcb_curate.tui.screens.review import ReviewScreen


class CurateApp(App[None]):
    """The review app.

    Args:
        session: an open review session (the caller closes its workspace after ``run``).
        keymap: action id -> key(s), from the config file's ``[keys]`` table.
        config_path: the config file given with ``--config`` (its ``[llm]`` table configures
            the LLM actions), or None for the default one.
    """

    CSS_PATH = [styles_dir() / "app.tcss"]
    TITLE = "mtcb-curate"
    ENABLE_COMMAND_PALETTE = True

    def __init__(self, session: ReviewSession, keymap: dict[str, str] | None = None,
                 config_path: Path | None = None) -> None:
        super().__init__()
        self.session = session
        self.keymap = dict(keymap or {})
        self.config_path = config_path
        self.collector = CollectorPolicy()

    def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)
        self.push_screen(ReviewScreen(self.session))
        # Once the first screen is drawn: keep full garbage collections out of key presses.
        self.call_after_refresh(self.collector.start)
        self.set_interval(CHECK_SECONDS, self.collector.tick)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self.collector.touch()
        await super().on_event(event)

    def on_unmount(self) -> None:
        self.collector.restore()
