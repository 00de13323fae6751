"""Widgets' painted lines freed with their widget: ``StylesCache.get_inner_outer`` cached on its
colours only.

Every widget paints through its own ``textual._styles_cache.StylesCache``, which keeps the
widget's last painted lines (``Strip`` objects, each with its seven caches and the strips those
hold: a cropped copy, a filtered copy, ...). Textual's ``StylesCache.get_inner_outer`` is an
instance method decorated with ``functools.lru_cache(1024)``: its cache key holds the instance,
so the cache keeps the last 1,024 widgets' ``StylesCache`` alive, with their painted lines,
long after the widgets are gone. Each dialog opened and closed (a shrink proposal, a notice)
leaves a few, and every full garbage collection walks what they hold: the idle collection of
``tui/memory.py`` grew with every pair shown until it delayed a key pressed as it ran
(figures: ``docs/performance.md``, ``docs/textual-workarounds.md``).

``release_styles_caches()`` replaces the method by one that keys the same cache on the two
colours alone (what the result depends on: two ``rich.style.Style`` of them) and empties
Textual's cache. Canary: ``tests/test_workarounds.py`` (Textual's method still holds the
instance in its cache key; ours gives the same styles and holds none).
"""

from __future__ import annotations

import functools

__all__ = ["release_styles_caches"]

#: Entries of the colour-keyed cache (Textual's own size).
CACHE_SIZE = 1024


def release_styles_caches() -> bool:
    """Make ``StylesCache.get_inner_outer`` cache on its two colours, not on the instance (see
    the module docstring), and empty the cache Textual's method filled. Idempotent; returns
    False (nothing done) when this Textual's method is not an ``lru_cache`` over a plain
    function (nothing to work around, or a shape this does not know)."""
    from textual._styles_cache import StylesCache

    textual_method = StylesCache.__dict__.get("get_inner_outer")
    if getattr(textual_method, "colours_only", False):
        return True
    plain = getattr(textual_method, "__wrapped__", None)
    if plain is None or not hasattr(textual_method, "cache_clear"):
        return False

    @functools.lru_cache(CACHE_SIZE)
    def inner_outer(base_background, background):
        return plain(None, base_background, background)  # the body reads its colours only

    def get_inner_outer(self, base_background, background):
        return inner_outer(base_background, background)

    get_inner_outer.__doc__ = plain.__doc__
    get_inner_outer.colours_only = True  # type: ignore[attr-defined]
    get_inner_outer.textual_method = textual_method  # type: ignore[attr-defined]
    get_inner_outer.cache = inner_outer  # type: ignore[attr-defined]
    StylesCache.get_inner_outer = get_inner_outer  # type: ignore[method-assign]
    textual_method.cache_clear()
    return True
