"""The Textual app: one review screen over a ``ReviewSession``, keys rebindable by action id."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from textual import events
from textual.app import App
from textual.driver import Driver

from mtcb_curate import threads
from mtcb_curate.resources import styles_dir
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.keys import KeyGate
from mtcb_curate.tui.memory import CHECK_SECONDS, CollectorPolicy
from mtcb_curate.tui.messages import KeysReleased
from mtcb_curate.tui.palette import ReviewCommands
from mtcb_curate.tui.screens.review import ReviewScreen
from mtcb_curate.tui.workarounds.strips import keep_strips_acyclic


#: The interpreter's thread switch interval while the app runs (``sys.setswitchinterval``;
#: Python's default is 0.005 s): how long the app's thread waits at most for a busy worker
#: thread to hand over the GIL.
SWITCH_INTERVAL_S = 0.001


class KeyHolds:
    """The workers held for each key from the moment the terminal's input thread reads it
    until the app has drawn its frame (``threads.hold``), while a start-up pass runs.

    Holding only once the app's thread handles the key (as a key posted by a test's Pilot is)
    leaves the key's way from the input thread to the app's thread to compete with the
    workers for the GIL.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrived = 0  # keys held by the input thread, not yet handled
        #: Keys read from the terminal so far (only the input thread adds): work on the app's
        #: thread that can wait (painting ahead) stops when this moves on.
        self.read = 0

    def arrived(self) -> None:
        """A key read from the terminal (the input thread): count it; hold the pacing workers."""
        self.read += 1
        if threads.workers_pacing():
            threads.hold()
            with self._lock:
                self._arrived += 1

    def handling(self) -> bool:
        """A key reaches the app (its thread). Returns whether the workers are held for it:
        the caller then calls ``threads.release`` once its frame is drawn."""
        with self._lock:
            if self._arrived:
                self._arrived -= 1
                return True
        if threads.workers_pacing():
            threads.hold()
            return True
        return False


def _holding_driver(base: type[Driver]) -> type[Driver]:
    """``base`` (the terminal's driver class) whose input thread tells the app's
    :class:`KeyHolds` of each key as it is read."""

    class HoldingDriver(base):  # type: ignore[valid-type, misc]
        def process_message(self, message) -> None:
            if isinstance(message, events.Key):
                holds = getattr(self._app, "key_holds", None)
                if holds is not None:
                    holds.arrived()
            super().process_message(message)

    HoldingDriver.__name__ = HoldingDriver.__qualname__ = f"Holding{base.__name__}"
    return HoldingDriver


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
        #: Each key holds the start-up passes' workers until its frame (``KeyHolds``).
        self.key_holds = KeyHolds()
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
        # Worker threads (passage scan, near-duplicate search) hold the GIL for up to the switch
        # interval each time the app's thread asks for it, and a key takes several hand-overs
        # (handler, frame, the driver's writer thread): at the default 5 ms that made most keys
        # take 50-100 ms while the start-up passes ran at 100,000 pairs.
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
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

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal, its input thread holding the workers at each
        key (``KeyHolds``)."""
        return _holding_driver(super().get_driver_class())

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and self.key_gate.take(event):
            return  # kept until a change waiting on the server is done (``KeyGate``)
        if isinstance(event, events.Key):
            self.collector.touch()
            if self.key_holds.handling():
                # The start-up passes' workers sleep until the key's frame is drawn.
                try:
                    await super().on_event(event)
                finally:
                    self.call_after_refresh(threads.release)
                return
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
        sys.setswitchinterval(self._switch_interval)
