"""Every use of Textual's or Rich's private API, each behind one function or class.

Nothing else in the package touches a private Textual or Rich name (``textual._x``, ``rich._x``,
or an ``_x`` attribute of a Textual or Rich object); ``tests/test_workarounds.py`` checks that
by reading the source, and holds one canary per workaround: a test that fails when the Textual
behaviour worked around changes (the workaround may then go) or when a private name it uses
disappears. Textual is pinned to the major version these were tested with (``pyproject.toml``).
The Textual behaviours, with minimal reproductions to report upstream, are in
``docs/textual-workarounds.md``.

- ``frames``: ``FrameClock``/``PromptFrames``, a screen's next frame counted from the previous
  one instead of Textual's grid of timer ticks (up to two intervals' wait after a key).
- ``strips``: ``keep_strips_acyclic``, ``Strip.divide`` without the reference cycle Textual's
  leaves in every row it keeps whole (garbage only a full collection frees).
- ``styles``: ``release_styles_caches``, ``StylesCache.get_inner_outer`` cached on its colours,
  not on the instance (Textual's cache kept every closed widget's painted lines alive).
- ``repaint``: ``forget_painted_lines``, a hidden widget's repaint that does not make Textual
  rebuild its whole widget map.
- ``text``: Rich's line breaker (``divide_line``) and cell-width table, for wrapping long texts
  without building every row.
- ``keys``: ``keys_waiting`` (a key waits in the app's queue), ``focus_pending`` (a focus
  asked for and still queued), ``idle`` (the app and its screen have handled what they hold:
  the app's keys one at a time) and ``RunsOwnBindings`` (an input's own bindings run as it
  reads the key, in the order typed).
- ``nodes``: ``is_closing``, a widget whose removal has started.
"""
