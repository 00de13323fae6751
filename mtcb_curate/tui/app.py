"""The Textual app: one review screen over a ``ReviewSession``, keys rebindable by action id."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from textual import events
from textual.app import App, ScreenStackError

from mtcb_curate.resources import styles_dir
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.tui.changes import Changes
from mtcb_curate.tui.keys import CHANGE, ORDER, KeyGate, keys_in_order
from mtcb_curate.tui.memory import CHECK_SECONDS, CollectorPolicy
from mtcb_curate.tui.messages import ChangeReady, KeysReleased, WorkspaceReconnecting
from mtcb_curate.tui.palette import ReviewCommands
from mtcb_curate.tui.screens.review import ReviewScreen
from mtcb_curate.tui.workarounds.keys import idle
from mtcb_curate.tui.workarounds.strips import keep_strips_acyclic
from mtcb_curate.tui.workarounds.styles import release_styles_caches


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
        #: Keys kept while a change waits on a server, or until the key before has taken effect.
        self.key_gate = KeyGate()
        self._ordering: asyncio.Task | None = None
        #: Every change to a pair, made without waiting on a server (``tui.changes``).
        self.changes = Changes(self)
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
        release_styles_caches()  # a closed widget's painted lines freed with it
        self.collector.defer_full()
        self.changes.attach()
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
        if not isinstance(event, events.Key) or event.is_forwarded:
            if isinstance(event, events.Key):
                self.collector.touch()
            await super().on_event(event)
            return
        if self.key_gate.take(event):
            return  # kept: a change waits on the server, or the key before left work (``KeyGate``)
        self.collector.touch()
        before = self._keys_go_to()
        if before == (None, None):
            return  # the app is closing (its last screen gone): a key kept until now has nothing to go to
        try:
            await super().on_event(event)
        finally:
            if event.key not in KeyGate.PASS and self._keys_go_to() != (None, None) and keys_in_order(self, before):
                self._keep_order()

    def _keys_go_to(self) -> tuple[object, object]:
        """``(screen, focused widget)``: where the next key goes; ``(None, None)`` once the
        app has no screen (closing)."""
        try:
            return self.screen, self.focused
        except ScreenStackError:
            return None, None

    def _keep_order(self) -> None:
        """Keep the keys read from now on until the app and its screen have handled the work the
        key just handled set going (``tui.keys.keys_in_order``), then hand them back in order."""
        self.key_gate.hold(ORDER)
        if self._ordering is None or self._ordering.done():
            self._ordering = asyncio.get_running_loop().create_task(self._release_in_order())

    async def _release_in_order(self) -> None:
        try:
            await idle(self)
        except Exception:  # noqa: BLE001 - the app is closing: the keys go as they can
            pass
        finally:
            self.release_keys(ORDER, replay=True)

    async def on_keys_released(self, message: KeysReleased) -> None:
        """Handle the keys the gate kept, in order (``KeyGate.drain``)."""
        await self.key_gate.drain(self.on_event)

    def release_keys(self, reason: str = CHANGE, *, replay: bool) -> int:
        """Stop keeping keys for ``reason`` (``KeyGate.release``); with ``replay`` they are
        handled next, in order, once nothing else holds them; else they are dropped. Returns how
        many were kept."""
        kept = self.key_gate.release(reason, replay=replay)
        if replay and kept and not self.key_gate.holding:
            self.post_message(KeysReleased())
        return kept

    def on_change_ready(self, message: ChangeReady) -> None:
        """A change waiting on the server can go on (``Changes.ready``)."""
        self.changes.ready(message.pending)

    def on_workspace_reconnecting(self, message: WorkspaceReconnecting) -> None:
        """The shared workspace is replacing a lost connection (``Changes.reconnecting_now``)."""
        self.changes.reconnecting_now(message.message)

    def on_unmount(self) -> None:
        self.collector.restore()
