"""Whether a widget is being removed: Textual's ``MessagePump._closing``, which no public
property gives (``is_attached`` stays true until the removal ends; ``is_parent_active`` says
it of a parent only).

The statistics screen's charts draw after their first refresh; a chart replaced by newer
figures (or closed with its screen) in the meantime must not draw, or the plot widget asks for
children already gone. Canary: ``tests/test_workarounds.py`` (``_closing`` still turns true while
a widget is removed).
"""

from __future__ import annotations

from textual.dom import DOMNode

__all__ = ["is_closing"]


def is_closing(node: DOMNode) -> bool:
    """True from the moment ``node``'s removal starts (its message queue is closing)."""
    return bool(getattr(node, "_closing", False))
