"""The ``[preview]`` config table: which chunkers, the reference chunk size, the retriever, k.

::

    [preview]
    chunkers = ["recursive:2048", "token:512"]   # chonkie specs (preview.chunkers)
    reference_size = 2048                        # characters: a passage longer fails 'findable'
    retriever = "bm25"                           # or "dense" (wordllama)
    k = [1, 3, 5, 10]
    seed = 0                                     # the paired bootstrap's (preview.separation)
    resamples = 2000                             # bootstrap resamples
    detect = 3.0                                 # points of recall@k "pairs needed" is for
    power = 0.8                                  # the power wanted for it

``reference_size`` defaults to 2,048 characters, the chunk size MTCB's generator used
(``RecursiveChunker()``) and the FichaEvaluator run in the issue: no chunker of that size can
ever score a longer passage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mtcb_curate.errors import CurateError
from mtcb_curate.preview.chunkers import DEFAULT_SPECS, ChunkerSpec, parse_spec
from mtcb_curate.preview.retrievers import RETRIEVERS
from mtcb_curate.preview.scoring import DEFAULT_KS
from mtcb_curate.preview.separation import DETECT_POINTS, POWER, RESAMPLES, SEED

REFERENCE_SIZE = 2048
#: At most this many bootstrap resamples (memory and time grow with them).
MAX_RESAMPLES = 100_000


@dataclass(frozen=True)
class SeparationSettings:
    """The chunker-separation statistics' settings (``preview.separation``): the bootstrap's
    ``seed`` and ``resamples``, and the difference ``detect`` (points of recall@k) and ``power``
    the pairs needed are computed for."""

    seed: int = SEED
    resamples: int = RESAMPLES
    detect: float = DETECT_POINTS
    power: float = POWER

    def check(self, where: str) -> "SeparationSettings":
        """Itself when every value is usable.

        Raises:
            CurateError: naming ``where`` and the value at fault.
        """
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise CurateError(f"{where} seed must be a whole number >= 0")
        if (not isinstance(self.resamples, int) or isinstance(self.resamples, bool)
                or not 100 <= self.resamples <= MAX_RESAMPLES):
            raise CurateError(f"{where} resamples must be a whole number from 100 to {MAX_RESAMPLES:,}")
        if isinstance(self.detect, bool) or not isinstance(self.detect, (int, float)) or not 0 < self.detect < 100:
            raise CurateError(f"{where} detect must be a number of recall points between 0 and 100")
        if isinstance(self.power, bool) or not isinstance(self.power, (int, float)) or not 0 < self.power < 1:
            raise CurateError(f"{where} power must be a number between 0 and 1, e.g. 0.8")
        return self


@dataclass(frozen=True)
class PreviewSettings:
    chunkers: tuple[ChunkerSpec, ...]
    reference_size: int = REFERENCE_SIZE
    retriever: str = "bm25"
    k: tuple[int, ...] = DEFAULT_KS
    separation: SeparationSettings = field(default_factory=SeparationSettings)

    @classmethod
    def resolve(cls, config: Path | None = None) -> "PreviewSettings":
        """The defaults, then ``config``'s ``[preview]`` table (None: the default config file).

        Raises:
            CurateError: a value of the wrong type, or an unknown chunker spec or retriever.
        """
        from mtcb_curate.config import default_config_path, read_table

        t = read_table("preview", config)
        where = f"{config or default_config_path()}: [preview]"
        specs = t.get("chunkers", list(DEFAULT_SPECS))
        if not isinstance(specs, list) or not specs or not all(isinstance(s, str) for s in specs):
            raise CurateError(f'{where} chunkers must be a list of specs such as ["recursive:2048"]')
        size = t.get("reference_size", REFERENCE_SIZE)
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise CurateError(f"{where} reference_size must be a positive whole number of characters")
        retriever = t.get("retriever", "bm25")
        if retriever not in RETRIEVERS:
            raise CurateError(f'{where} retriever must be "bm25" or "dense"')
        ks = t.get("k", list(DEFAULT_KS))
        if not isinstance(ks, list) or not ks or not all(isinstance(k, int) and k >= 1 for k in ks):
            raise CurateError(f"{where} k must be a list of positive whole numbers such as [1, 3, 5, 10]")
        sep = SeparationSettings(t.get("seed", SEED), t.get("resamples", RESAMPLES), t.get("detect", DETECT_POINTS),
                                 t.get("power", POWER)).check(where)
        return cls(tuple(parse_spec(s) for s in specs), size, retriever, tuple(sorted(set(ks))), sep)


def parse_ks(text: str) -> tuple[int, ...]:
    """``"1,3,5,10"`` -> (1, 3, 5, 10).

    Raises:
        InputError: not a comma-separated list of positive whole numbers.
    """
    from mtcb_curate.errors import InputError

    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise InputError("--k", f"{text!r}: give positive whole numbers separated by commas, e.g. 1,3,5,10")
    return tuple(sorted({int(p) for p in parts}))
