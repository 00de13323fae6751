"""Steering generation: example questions and target shares of question forms.

Config (``config.toml``; every key optional; ``[generate.NAME]`` overrides ``[generate]`` for
the dataset profile ``NAME``)::

    [generate]
    examples = ["What was the company's revenue in fiscal 2023?"]   # shown to the model, style only
    forms = { "how much" = 0.3, when = 0.2, what = 0.3, which = 0.2 }  # target shares of question forms
    mode = "auto"      # auto | numbered | quote (llm.generate.resolve_mode); --mode wins
    dense = false      # evidence-dense questions (several consecutive sentences); --dense wins

``--examples FILE`` (one question per line; blank lines and lines starting with ``#`` are
skipped) replaces the config's examples for one run.

Forms are those of ``stats.questions.question_form`` (``what``, ``which``, ``how much``,
``when``, ``who``, ``why``, ``list``, ``other``; ``yes-no`` is never asked for). With target
shares, each new pair is asked for the form furthest below its target: for job k the form f
maximising ``share(f) * (N + k + 1) - count(f)``, where N is the number of questions so far and
count(f) includes the forms asked for by the earlier jobs of the run (largest-remainder
apportionment; ties go to the form listed first in ``FORMS``). Both go in the prompt's changing
tail (``prompts.generation_messages``), after the window, so the cached prefix stays the same.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtcb_curate.errors import CurateError
from mtcb_curate.llm.prompts import FORM_REQUESTS, MAX_EXAMPLES, Steering

#: Longest example question read (characters); a longer line is refused with its line number.
MAX_EXAMPLE_CHARS = 500


@dataclass(frozen=True)
class SteeringConfig:
    """The steering of a run.

    Attributes:
        examples: example questions (at most :data:`prompts.MAX_EXAMPLES` are sent).
        shares: target share (0-1) of each question form; empty: no form is asked for.
    """

    examples: tuple[str, ...] = ()
    shares: Mapping[str, float] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True when it asks for nothing."""
        return not self.examples and not self.shares

    @classmethod
    def resolve(cls, profile: Any = None, config: Path | Mapping[str, Any] | None = None,
                examples_file: Path | str | None = None) -> "SteeringConfig":
        """``[generate]``, then ``[generate.<profile name>]``, then ``examples_file``.

        Args:
            profile: a ``Profile`` (its ``name`` picks the sub-table) or None.
            config: the config file (None: the default one) or the ``[generate]`` table itself.
            examples_file: a file of example questions (:func:`read_examples`), or None.

        Raises:
            CurateError: the file is not valid TOML; an unknown key or form; a share outside
                0-1 or shares summing to more than 1.0001; a bad examples file.
        """
        if isinstance(config, Mapping):
            table = dict(config)
        else:
            from mtcb_curate.config import read_table

            table = read_table("generate", Path(config) if config is not None else None)
        name = getattr(profile, "name", None)
        sub = table.get(name) if isinstance(name, str) else None
        examples: tuple[str, ...] = ()
        shares: dict[str, float] = {}
        for layer in (table, sub if isinstance(sub, Mapping) else {}):
            for key, value in layer.items():
                if isinstance(value, Mapping) and key != "forms":
                    continue  # another profile's table
                if key == "examples":
                    if not isinstance(value, list) or not all(isinstance(q, str) for q in value):
                        raise CurateError("[generate] examples must be a list of strings")
                    examples = tuple(q.strip() for q in value if q.strip())
                elif key == "forms":
                    shares = _shares(value)
                elif key in ("mode", "dense"):
                    continue  # generation_settings reads them
                else:
                    raise CurateError(f"[generate] {key}: unknown setting (known: examples, forms, mode, dense)")
        if examples_file is not None:
            examples = read_examples(examples_file)
        return cls(examples, shares)

    def plan(self, existing_questions: Sequence[str], n: int) -> list[Steering | None]:
        """The steering of each of ``n`` new pairs, given the questions so far (see the module
        docstring); None entries when it asks for nothing."""
        if self.empty:
            return [None] * max(n, 0)
        forms: list[str | None] = list(plan_forms(existing_questions, n, self.shares)) or [None] * max(n, 0)
        return [Steering(self.examples[:MAX_EXAMPLES], f) for f in forms]


def _shares(value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise CurateError('[generate] forms must be a table of form = share, e.g. { "how much" = 0.3 }')
    out: dict[str, float] = {}
    for form, share in value.items():
        if form not in FORM_REQUESTS:
            raise CurateError(f"[generate] forms: unknown form {form!r} (known: {', '.join(FORM_REQUESTS)})")
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise CurateError(f"[generate] forms: the share of {form!r} must be a number from 0 to 1, not {share!r}")
        out[form] = float(share)
    if sum(out.values()) > 1.0001:
        raise CurateError(f"[generate] forms: the shares add up to {sum(out.values()):.2f}, more than 1")
    return out


def read_examples(path: Path | str) -> tuple[str, ...]:
    """The example questions of a file: one per line, UTF-8; blank lines and lines starting
    with ``#`` are skipped.

    Raises:
        CurateError: the file cannot be read, is not UTF-8, holds no question, or a line is
            longer than :data:`MAX_EXAMPLE_CHARS` (naming the file and line).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CurateError(f"{p}: the examples file is not UTF-8 text") from None
    except OSError as exc:
        raise CurateError(f"{p}: cannot read the examples file ({exc.strerror or exc})") from None
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if len(line) > MAX_EXAMPLE_CHARS:
            raise CurateError(f"{p}, line {number}: an example question of {len(line):,} characters "
                              f"(at most {MAX_EXAMPLE_CHARS})")
        out.append(line)
    if not out:
        raise CurateError(f"{p}: no example question in the file (one per line)")
    return tuple(out)


def plan_forms(existing_questions: Sequence[str], n: int, shares: Mapping[str, float]) -> list[str]:
    """The form to ask for each of ``n`` new questions so the forms move towards ``shares``
    (formula in the module docstring).

    Args:
        existing_questions: the questions so far (their forms are counted).
        n: how many new questions.
        shares: target share per form (forms of ``FORM_REQUESTS``).

    Returns:
        ``n`` forms.
    """
    from mtcb_curate.stats.questions import FORMS, question_form

    wanted = [f for f in FORMS if f in shares and shares[f] > 0]
    if not wanted:
        return []
    counts = Counter(question_form(q) for q in existing_questions)
    total = len(existing_questions)
    out = []
    for k in range(max(n, 0)):
        after = total + k + 1
        best = max(wanted, key=lambda f: (shares[f] * after - counts[f], -wanted.index(f)))
        out.append(best)
        counts[best] += 1
    return out


def generation_settings(profile: Any = None, config: Path | Mapping[str, Any] | None = None, *,
                        mode: str | None = None, dense: bool | None = None) -> tuple[str, bool]:
    """The generation mode and the evidence-dense option of a run: the options given (``--mode``,
    ``--dense``), else ``[generate.<profile name>]``, else ``[generate]``, else ``auto`` and False.
    The mode may still be ``auto`` (``llm.generate.resolve_mode`` picks by the server).

    Raises:
        CurateError: the file is not valid TOML; an unknown mode; ``dense`` not a boolean.
    """
    from mtcb_curate.llm.generate import MODES

    if isinstance(config, Mapping):
        table = dict(config)
    else:
        from mtcb_curate.config import read_table

        table = read_table("generate", Path(config) if config is not None else None)
    name = getattr(profile, "name", None)
    sub = table.get(name) if isinstance(name, str) else None
    got_mode, got_dense = "auto", False
    for layer in (table, sub if isinstance(sub, Mapping) else {}):
        if "mode" in layer:
            got_mode = layer["mode"]
        if "dense" in layer:
            got_dense = layer["dense"]
    if mode is not None:
        got_mode = mode
    if dense is not None:
        got_dense = dense
    if got_mode not in MODES:
        raise CurateError(f"[generate] mode must be one of {', '.join(MODES)}, not {got_mode!r}")
    if not isinstance(got_dense, bool):
        raise CurateError("[generate] dense must be true or false")
    return got_mode, got_dense
