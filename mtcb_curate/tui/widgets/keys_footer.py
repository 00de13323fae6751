"""The review screen's footer: its keys on one row, the essential ones always shown.

One ``Bar`` row built from the screen's active bindings (``Screen.active_bindings``, so a key
rebound in the config file shows as rebound), rebuilt when they change
(``Screen.bindings_updated_signal``) or the width does. The essential keys (help and quit) sit
at the right end whatever the width; the others follow the bindings' order from the left and
stop before the first one that would not fit whole (at 80 columns, "/ sear" used to end
Textual's ``Footer`` and hide ``?`` and ``q``). ``?`` lists every key. A click on a key runs
its action, as on Textual's footer.

Textual's ``Footer`` mounts one widget per key on every bindings update (25-35 ms each, three
times around the first frame); this row costs one ``Text``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen

from mtcb_curate.tui.widgets.bar import Bar

#: Cells between two keys.
GAP = 2


@dataclass(frozen=True)
class FooterKey:
    """One key on the footer: ``key`` as typed (``App.get_key_display``), what it does, and
    where its action runs (``node``, ``action``)."""

    key: str
    description: str
    action: str
    node: DOMNode | None = None

    @property
    def cells(self) -> int:
        """Cells this key takes: the key, a space, the description."""
        return cell_len(self.key) + 1 + cell_len(self.description)


def fit_keys(keys: Sequence[FooterKey], essential: Sequence[FooterKey], width: int) -> list[FooterKey]:
    """The keys one row of ``width`` cells shows, in order: ``keys`` from the left while each
    fits whole with ``GAP`` cells between keys, then every ``essential`` key (shown whatever
    the width, at the right end: cut only when they alone are wider than the row)."""
    right = sum(k.cells for k in essential) + GAP * max(0, len(essential) - 1)
    shown: list[FooterKey] = []
    used = 0
    for k in keys:
        need = k.cells + GAP
        if used + need + right > width:
            break
        shown.append(k)
        used += need
    return shown + list(essential)


def _declared(screen_class: type) -> list[Binding]:
    """The bindings ``screen_class`` declares, in order (its ``BINDINGS``, ``(key, action,
    description)`` tuples made bindings)."""
    out = []
    for item in getattr(screen_class, "BINDINGS", []):
        out.append(item if isinstance(item, Binding) else Binding(*item))
    return out


class KeysFooter(Bar):
    """The keys of its screen on one row (see the module docstring); ``essential``: the actions
    always shown, at the right end."""

    COMPONENT_CLASSES = {"keys-footer--key"}
    DEFAULT_CSS = """
    KeysFooter { dock: bottom; height: 1; background: $footer-background; color: $footer-foreground; }
    KeysFooter > .keys-footer--key { color: $footer-key-foreground; text-style: bold; }
    """

    def __init__(self, essential: Iterable[str] = ("help", "quit"), *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.essential = tuple(essential)
        self._keys: list[FooterKey] = []
        self._pinned: list[FooterKey] = []
        #: (first cell, end cell, key) of each key drawn, for clicks.
        self._spans: list[tuple[int, int, FooterKey]] = []

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        """Read the screen's active bindings again; redraw when what is shown changes."""
        if screen is not self.screen:
            return
        keys: list[FooterKey] = []
        pinned: dict[str, FooterKey] = {}
        seen: set[str] = set()
        for node, binding, enabled, _tooltip in screen.active_bindings.values():
            if not binding.show or not enabled or binding.action in seen:
                continue
            seen.add(binding.action)
            key = FooterKey(self.key_display(binding), binding.description, binding.action, node)
            if binding.action in self.essential:
                pinned[binding.action] = key
            else:
                keys.append(key)
        if self.app.ENABLE_COMMAND_PALETTE and self.app.COMMAND_PALETTE_BINDING:
            palette = Binding(self.app.COMMAND_PALETTE_BINDING, "command_palette", "palette")
            keys.append(FooterKey(self.key_display(palette), "palette", "app.command_palette", None))
        # in the order the screen declares its keys (a key rebound by the keymap keeps its place)
        order = {b.action: i for i, b in enumerate(_declared(type(screen)))}
        keys.sort(key=lambda k: order.get(k.action, len(order)))
        self._keys = keys
        self._pinned = [pinned[a] for a in self.essential if a in pinned]
        self._redraw()

    def key_display(self, binding: Binding) -> str:
        """``binding``'s key as the curator types it (``?``, ``.``, ``pgdn``; its first key when
        it has several)."""
        first = binding.key.split(",")[0].strip()
        return self.app.get_key_display(Binding(first, binding.action, key_display=binding.key_display))

    def on_resize(self, event: events.Resize) -> None:
        self._redraw()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.is_mounted:
            self._redraw()

    def _redraw(self) -> None:
        width = self.content_region.width
        if not width:
            return
        shown = fit_keys(self._keys, self._pinned, width)
        key_style = self.get_component_rich_style("keys-footer--key", partial=True)
        text = Text(no_wrap=True)
        spans: list[tuple[int, int, FooterKey]] = []
        pinned_from = len(shown) - len(self._pinned)
        for i, k in enumerate(shown):
            if i == pinned_from and pinned_from < len(shown):
                fill = width - text.cell_len - sum(p.cells for p in self._pinned) - GAP * (len(self._pinned) - 1)
                text.append(" " * max(GAP if i else 0, fill))
            elif i:
                text.append(" " * GAP)
            start = text.cell_len
            text.append(k.key, style=key_style or Style(bold=True))
            text.append(" " + k.description)
            spans.append((start, text.cell_len, k))
        self._spans = spans
        self.update(text)

    def shown_keys(self) -> list[FooterKey]:
        """The keys drawn now, left to right."""
        return [k for _a, _b, k in self._spans]

    async def on_click(self, event: events.Click) -> None:
        for start, end, k in self._spans:
            if start <= event.x < end:
                event.stop()
                if k.node is None:
                    await self.app.run_action(k.action)
                else:
                    await self.app.run_action(k.action, k.node)
                return
