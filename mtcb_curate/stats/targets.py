"""Target distributions of a set (the ``[stats]`` config table) and how a set misses them.

Config (``config.toml``; every key optional; ``[stats.NAME]`` overrides ``[stats]`` for the
dataset profile ``NAME``)::

    [stats]
    max_form_share = 0.8          # no question form (what, which, ...) above this share
    max_type_share = 0.9          # no question type (numeric, date, ...) above this share
    min_pairs_per_document = 1    # every document has at least this many pairs

    [stats.sencha]
    max_form_share = 0.5

Defaults (ours): ``min_pairs_per_document = 1`` (macha had hundreds of documents with no
question: a retriever is never asked about them); ``max_form_share = 0.8`` (MTCB's prompts
prefer What/When/Where/Which/How, so "what" dominates a healthy set; above 80 % the questions
are nearly all of one mould); ``max_type_share`` off (None) by default: a financial set is
mostly numeric by nature. The ``balance`` check warns when a set is outside them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from mtcb_curate.errors import CurateError
from mtcb_curate.plaintext import one_line

_SHARES = ("max_form_share", "max_type_share")


@dataclass(frozen=True)
class Targets:
    """The target distributions (see the module docstring); None turns one off."""

    max_form_share: float | None = 0.8
    max_type_share: float | None = None
    min_pairs_per_document: int | None = 1

    @classmethod
    def resolve(cls, profile: Any = None, config: Path | Mapping[str, Any] | None = None) -> Targets:
        """The defaults, then ``[stats]``, then ``[stats.<profile name>]``.

        Args:
            profile: a ``Profile`` (its ``name`` picks the sub-table) or None.
            config: the config file (None: the default one) or the ``[stats]`` table itself.

        Raises:
            CurateError: the file is not valid TOML, or a value is out of range.
        """
        if isinstance(config, Mapping):
            table = dict(config)
        else:
            from mtcb_curate.config import read_table

            table = read_table("stats", config)
        values: dict[str, Any] = {}
        name = getattr(profile, "name", None)
        layers = [table, table.get(name) if isinstance(name, str) and isinstance(table.get(name), Mapping) else {}]
        known = {f.name for f in fields(cls)}
        for layer in layers:
            for key, value in layer.items():
                if isinstance(value, Mapping):
                    continue  # another profile's table
                if key not in known:
                    raise CurateError(f"[stats] {key}: unknown setting (known: {', '.join(sorted(known))})")
                values[key] = _value(key, value)
        return cls(**values)


def _value(key: str, value: Any) -> float | int | None:
    if value is False or value is None:
        return None
    if key in _SHARES:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
            raise CurateError(f"[stats] {key} must be a share between 0 and 1 (e.g. 0.2), or false")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CurateError(f"[stats] {key} must be a whole number of pairs, or false")
    return value


def balance_problems(forms: Mapping[str, int], types: Mapping[str, int], per_document: Mapping[str, int],
                     targets: Targets) -> list[str]:
    """One line per way the set misses ``targets``: a form or type over its share, documents
    under the minimum of pairs (counts per document key; every document must be a key, with 0
    when it has none). Empty when the set has no pairs to judge (nothing to balance)."""
    out: list[str] = []
    total = sum(forms.values())
    if not total:
        return out
    if total:
        for label, counts, limit in (("question form", forms, targets.max_form_share),
                                     ("question type", types, targets.max_type_share)):
            if limit is None:
                continue
            for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
                if n / total > limit:
                    out.append(f"{label} '{name}' is {n / total:.0%} of {total} pairs (target at most {limit:.0%})")
    m = targets.min_pairs_per_document
    if m:
        under = [k for k, n in per_document.items() if n < m]
        if under:
            some = ", ".join(one_line(str(k), 30) for k in under[:5])
            more = f" and {len(under) - 5} more" if len(under) > 5 else ""
            out.append(f"{len(under)} document(s) with fewer than {m} pair(s): {some}{more}")
    return out
