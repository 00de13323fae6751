"""Typed access to the running ``CurateApp`` from its screens and widgets."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from mtcb_curate.tui.app import CurateApp


class CurateAppAccess:
    """Mixin for a ``Screen`` or ``Widget`` of the curate app: ``curate_app`` is ``self.app``
    typed as :class:`~mtcb_curate.tui.app.CurateApp` (its ``session``, ``keymap``,
    ``config_path``, ``collector`` and ``llm_client``). Only valid while mounted in a
    ``CurateApp``; every screen of this package is.
    """

    @property
    def curate_app(self) -> CurateApp:
        return cast("CurateApp", self.app)  # type: ignore[attr-defined]
