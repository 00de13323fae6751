"""The Textual app: one review screen over a ``ReviewSession``, keys rebindable by action id."""

from __future__ import annotations

import threading
from pathlib import Path

from textual import events
from textual.app import App

from mtcb_curate.resources import styles_dir
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.keys import KeyGate
from mtcb_curate.tui.memory import CHECK_SECONDS, CollectorPolicy
from mtcb_curate.tui.messages import KeysReleased
from mtcb_curate.tui.palette import ReviewCommands
from mtcb_curate.tui.screens.review import ReviewScreen
from mtcb_curate.tui.workarounds.strips import keep_strips_acyclic


class CurateApp(App[None]):
    """The review app.

    Args:
        session: an open review session (the caller closes its workspace after ``run``).
        keymap: action id -> key(s), from the config file's ``[keys]`` table.
        config_path: the config file given with ``--config`` (its ``[llm]`` table configures
            the LLM actions), or None for the default one.
    """

    #: Every stylesheet of ``styles/``: ``app.tcss`` first, then one file per screen.
    CSS_PATH = [styles_dir() / "app.tcss", *sorted(p for p in styles_dir().glob("*.tcss") if p.name != "app.tcss")]
    TITLE = "mtcb-curate"
    ENABLE_COMMAND_PALETTE = True
    #: ctrl+p: Textual's own commands, then the review screen's rarer actions (``tui/palette.py``).
    COMMANDS = App.COMMANDS | {ReviewCommands}

    def __init__(self, session: ReviewSession, keymap: dict[str, str] | None = None,
                 config_path: Path | None = None, hub_load=None) -> None:
        """``hub_load``: the Hub load still running after the bundled sample opened
        (``app.sources.HubLoad``), or None; its outcome is shown in the top bar when it ends."""
        super().__init__()
        self.session = session
        self.hub_load = hub_load
        self.keymap = dict(keymap or {})
        self.config_path = config_path
        self.collector = CollectorPolicy()
        #: Keys kept while a change waits on a server (a shared workspace reconnecting).
        self.key_gate = KeyGate()
        self._attempt_log = None

    def llm_client(self):
        """A ``ChatClient`` for the LLM actions: ``[llm]`` of the config file, then
        ``OPENAI_API_KEY``/``OPENAI_BASE_URL``/``OPENAI_MODEL``; replies cached in the
        workspace folder (not when it is read-only). Call it in a worker or an action: it
        imports openai (about 0.3 s the first time).

        Raises:
            LLMConfigError: no key for OpenAI's API, no model, or a bad setting.
        """
        from mtcb_curate.llm.client import configured_client

        folder = None if self.session.read_only else self.session.workspace.path
        return configured_client(folder, config_path=self.config_path)

    def llm_concurrency(self) -> int:
        """``[llm] concurrency`` of the config file (default 1). Call it in a worker.

        Raises:
            LLMConfigError: a bad value or an invalid file.
        """
        from mtcb_curate.llm.pool import read_concurrency

        return read_concurrency(self.config_path)

    def llm_steering(self):
        """The ``llm.steering.SteeringConfig`` of ``[generate]`` for the session's profile.

        Raises:
            CurateError: a bad ``[generate]`` table or an invalid file.
        """
        from mtcb_curate.llm.steering import SteeringConfig

        return SteeringConfig.resolve(self.session.dataset.profile, self.config_path)

    def llm_mode(self, client) -> tuple[str, bool]:
        """The generation mode (``quote`` / ``numbered``; ``auto`` picks by the client's server)
        and the evidence-dense option, from ``[generate]`` for the session's profile.

        Raises:
            CurateError: a bad ``[generate]`` table or an invalid file.
        """
        from mtcb_curate.llm.generate import resolve_mode
        from mtcb_curate.llm.steering import generation_settings

        asked, dense = generation_settings(self.session.dataset.profile, self.config_path)
        return resolve_mode(asked, client.config.base_url), dense

    @property
    def attempt_log(self):
        """Every generation attempt of this app session (``llm.generate.AttemptLog``): the
        failed attempts viewer (palette, and ``v`` in the run dialog) lists its refusals."""
        if self._attempt_log is None:
            from mtcb_curate.llm.generate import AttemptLog

            self._attempt_log = AttemptLog()
        return self._attempt_log

    def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)
        keep_strips_acyclic()  # painted rows freed when dropped, not left to full collections
        self.collector.defer_full()
        review = ReviewScreen(self.session)
        self.push_screen(review)
        if self.hub_load is not None:
            threading.Thread(target=self._watch_hub_load, args=(review,), name="mtcb-hub-watch",
                             daemon=True).start()
        # Once the first screen is drawn: keep full garbage collections out of key presses.
        self.call_after_refresh(self.collector.start)
        self.set_interval(CHECK_SECONDS, self.collector.tick)

    def _watch_hub_load(self, review: ReviewScreen) -> None:
        """Wait (on a thread of its own) for the background Hub load; tell the review screen."""
        from mtcb_curate.tui.messages import HubLoadDone

        self.hub_load.wait(None)
        review.post_message(HubLoadDone(self.hub_load.outcome or "", self.hub_load.loaded))

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and self.key_gate.take(event):
            return  # kept until a change waiting on the server is done (``KeyGate``)
        if isinstance(event, events.Key):
            self.collector.touch()
        await super().on_event(event)

    async def on_keys_released(self, message: KeysReleased) -> None:
        """Handle the keys the gate kept, in order (``KeyGate.drain``)."""
        await self.key_gate.drain(self.on_event)

    def release_keys(self, *, replay: bool) -> int:
        """Stop keeping keys (``KeyGate.release``); with ``replay`` they are handled next, in
        order. Returns how many were kept."""
        kept = self.key_gate.release(replay=replay)
        if replay and kept:
            self.post_message(KeysReleased())
        return kept

    def on_unmount(self) -> None:
        self.collector.restore()
