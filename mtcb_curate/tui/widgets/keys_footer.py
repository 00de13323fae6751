"""The review screen's footer: Textual's ``Footer``, rebuilt only when what it shows changes.

Textual's footer recomposes (removes and mounts one widget per key) on every bindings update
of its screen, whatever changed. While the review screen mounts that happens three times, 25-35
ms each (60 ms in a real terminal), around the first frame, so a key pressed as the first pair
appears waited behind them (README, "Background work at 100,000 pairs").
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    """``Footer`` that skips a bindings update leaving the keys it shows as they are (the same
    keys, descriptions, actions, enabled states and tooltips, and the command palette's key)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple | None = None

    def bindings_changed(self, screen: Screen) -> None:
        """Rebuild (as ``Footer`` does) only when the keys it would show differ from those it shows."""
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            shown = self.shown_keys(screen)
            if shown == self._shown and self._bindings_ready:
                return
            self._shown = shown
        super().bindings_changed(screen)

    @staticmethod
    def shown_keys(screen: Screen) -> tuple:
        """What the footer draws from ``screen``'s active bindings: per binding shown, its key,
        description, action, group, enabled state and tooltip (the palette's binding included)."""
        return tuple((binding.key, binding.description, binding.action, binding.group, binding.show, enabled, tooltip)
                     for _node, binding, enabled, tooltip in screen.active_bindings.values())
