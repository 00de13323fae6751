"""Painted rows that the garbage collector need not walk: ``Strip.divide`` without its cycle.

Textual's compositor cuts every painted row with ``Strip.divide``. For a row it keeps whole
(the only cut is at the row's end) Textual stores ``[self]`` in the strip's own divide cache
(``Strip._divide_cache``): a reference cycle, so the row and its seven caches (some fifteen
objects) outlive their widget until a full garbage collection. Paging through pairs leaves about
50,000 such objects a second; collected only by full collections they made each one walk
100,000-280,000 objects after 30-60 s of paging (200-800 ms at ficha scale, ``tui/memory.py``).

``keep_strips_acyclic()`` replaces ``Strip.divide`` by a function that returns a new ``[self]``
for that case without storing it (what the cache saved is one list) and hands every other cut
to Textual's own method. Canary: ``tests/test_workarounds.py`` (Textual's ``divide`` still
leaves the cycle, and the private cache it leaves it in still exists).
"""

from __future__ import annotations

__all__ = ["keep_strips_acyclic"]


def keep_strips_acyclic() -> bool:
    """Make ``textual.strip.Strip.divide`` leave no reference cycle when it keeps the strip
    whole (see the module docstring): the same result, not cached for that case; other cuts
    go to Textual's method as before. Idempotent; returns False (nothing done) when this
    Textual's ``Strip`` has no ``_divide_cache``, whose ``[self]`` entry is the cycle."""
    from textual.strip import Strip

    textual_divide = Strip.divide
    if getattr(textual_divide, "keeps_acyclic", False):
        return True
    probe = Strip([])
    if not hasattr(probe, "_divide_cache"):
        return False

    def divide(self: Strip, cuts):
        cuts = list(cuts)
        length = self.cell_length
        if [cut for cut in cuts if cut <= length] == [length]:
            return [self]
        return textual_divide(self, cuts)

    divide.__doc__ = textual_divide.__doc__
    divide.keeps_acyclic = True  # type: ignore[attr-defined]
    divide.textual_divide = textual_divide  # type: ignore[attr-defined]
    Strip.divide = divide  # type: ignore[method-assign]
    return True
