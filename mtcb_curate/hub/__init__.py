"""Publishing to the Hugging Face Hub, one idea per module:

- ``tables``: session -> the Arrow tables a publish commits (pure; the checklist's ``loads``
  uses it without touching the Hub);
- ``layout``: those tables in Hub layout (parquet shards, ``configs:`` front matter);
- ``card``: the dataset card, merged with the repository's current one;
- ``diff``: the generic row diff against the Hub's current version;
- ``plan``: the publish plan and its card, the gate and the dry run (pure, over a given Hub state);
- ``client``: the only module that imports ``huggingface_hub`` / ``httpx2``: reads the Hub,
  commits, loads back, and translates the client's errors;
- ``errors``: ``PublishError`` and its ``PublishErrorKind``;
- ``quiet``: keeping the libraries' own output off the terminal.

The names callers use are importable from here (``from mtcb_curate.hub import plan_publish``);
they are loaded on first use, so ``import mtcb_curate.hub.card`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mtcb_curate.hub.client import PublishResult, plan_publish, publish, quiet_hub
    from mtcb_curate.hub.diff import PublishDiff, RowDiff, diff_rows
    from mtcb_curate.hub.errors import LicenseRequired, PublishError, PublishErrorKind
    from mtcb_curate.hub.plan import (
        DEFAULT_REVISION,
        HubState,
        PublishPlan,
        build_plan,
        check_gate,
        curation_summary,
        dry_run,
    )
    from mtcb_curate.hub.quiet import Retry, quiet_datasets
    from mtcb_curate.hub.tables import ColumnNames, PublishedPair, accepted_pairs, build_tables, published_columns

#: public name -> the module of this package that defines it.
_EXPORTS = {
    "PublishResult": "client", "plan_publish": "client", "publish": "client", "quiet_hub": "client",
    "PublishDiff": "diff", "RowDiff": "diff", "diff_rows": "diff",
    "LicenseRequired": "errors", "PublishError": "errors", "PublishErrorKind": "errors",
    "DEFAULT_REVISION": "plan", "HubState": "plan", "PublishPlan": "plan", "build_plan": "plan",
    "check_gate": "plan", "curation_summary": "plan", "dry_run": "plan",
    "Retry": "quiet", "quiet_datasets": "quiet",
    "ColumnNames": "tables", "PublishedPair": "tables", "accepted_pairs": "tables", "build_tables": "tables",
    "published_columns": "tables",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Load a re-exported name from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
