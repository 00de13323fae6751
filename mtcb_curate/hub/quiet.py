"""Keep the data libraries' own output off the terminal (``dataset.quiet``, where the source
loading can use it too): ``Retry``, ``quiet_datasets``. ``hub.client.quiet_hub`` adds
huggingface_hub's progress bars."""

from __future__ import annotations

from mtcb_curate.dataset.quiet import QUIET_LOGGERS, Retry, quiet_datasets

__all__ = ["QUIET_LOGGERS", "Retry", "quiet_datasets"]
