"""Which source a command opens, and why; then the dataset and its workspace, opened together.

Order for ``mtcb-curate NAME`` (first that applies):

1. ``--sample``: the bundled sample (``sample_data/NAME``);
2. ``--source ...``: that folder, file pair or Hub repo id (``owner/name[@REVISION]``);
3. the workspace's own source, when the workspace exists (resume);
4. ``ORG/NAME`` through ``datasets``, from the Hub or its cache, for each organisation of the
   config's ``[hub] organisations`` in order (default ``feyninc``, then ``chonkie-ai``). Whether
   the Hub answers is decided first (``loading.hub_unreachable``, at most 2 s in all); when it
   does not, only the local cache is read. For the review app (``open_review``) a Hub that
   answers the probe is waited for while it keeps answering; silent for ``hub_wait`` seconds
   (2), its load goes on in the background (``HubLoad``) while the app opens the bundled sample;
5. the bundled sample, when step 4 fails and the dataset has one.

The reason is kept in ``Dataset.source.reason`` and shown on screen.

Which workspace (``Options.workspace_dir``; ``--workspace DIR|URL`` always wins, then the
``MTCB_CURATE_DATABASE_URL`` environment variable: a ``postgresql://`` URL is the shared
workspace of a team, ``store.postgres``), so that one
source's decisions never land on another's questions and no source is refused because another
was opened first:

- ``--sample``: ``workspaces/NAME-sample``;
- ``--source SPEC``: ``workspaces/NAME-src-HASH``, HASH the first 8 hex digits of the sha256 of
  the spec with local paths made absolute (``source_key``), so the same folder or Hub id given
  from anywhere opens the same workspace;
- either, when ``workspaces/NAME`` already holds exactly that source (a workspace made before
  workspaces were kept per source): ``workspaces/NAME``;
- neither (resume): the dataset's workspace a writer opened last among ``NAME`` and
  ``NAME-src-*`` (``store.sqlite.dataset_workspaces``), never one bound to the bundled sample:
  a sample opened because the Hub was unreachable once must not stand for the real dataset
  later. When there is none, steps 4 and 5 load the dataset, and its own workspace is used:
  ``workspaces/NAME-sample`` for the bundled sample, else ``workspaces/NAME`` (or, when that
  holds another source, ``NAME-src-HASH``).

Nothing is written before the input is accepted: a new workspace is created only after the
source has loaded (and, with ``strict``, has no row problem).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from mtcb_curate.dataset import loading
from mtcb_curate import resources
from mtcb_curate.config import hub_organisations
from mtcb_curate.errors import InputError, WorkspaceError
from mtcb_curate.dataset.model import Dataset, SourceInfo
from mtcb_curate.dataset.profiles import Profile, get_profile
from mtcb_curate.store.base import Store
from mtcb_curate.store.opening import describe, open_workspace, workspace_exists
from mtcb_curate.store.postgres import DATABASE_URL_ENV, is_database_url
from mtcb_curate.store.session import ReviewSession
from mtcb_curate.store.sqlite import Workspace, dataset_workspaces, default_workspace_dir, questions_fingerprint

SAMPLE_PREFIX = "sample:"


@dataclass
class Options:
    """What the command line says about the data and the workspace.

    Attributes:
        name: dataset name (``ficha``) or Hub id.
        source: explicit source (one folder or repo id, or two files), or None.
        sample: open the bundled sample.
        workspace: workspace folder or ``postgresql://`` URL, or None for the default one.
        read_only: open the workspace without writing.
        columns: column overrides for ``Profile.with_overrides``.
        strict: row-level input problems refuse the input (``--strict``).
        organisations: Hub owners tried for the dataset name, or None for the config file's
            ``[hub] organisations``.
        curator: who the changes are recorded under, or None for ``curators.default_curator()``.
    """

    name: str
    source: list[str] | None = None
    sample: bool = False
    workspace: Path | str | None = None
    read_only: bool = False
    columns: dict[str, str | None] = field(default_factory=dict)
    strict: bool = False
    organisations: tuple[str, ...] | None = None
    curator: str | None = None

    def profile(self) -> Profile:
        """The dataset profile with the column overrides applied."""
        return get_profile(self.name).with_overrides(**self.columns)

    def workspace_dir(self) -> Path | str:
        """The workspace folder (or database URL): ``--workspace``, else
        ``$MTCB_CURATE_DATABASE_URL``, else the default one of this source, or to resume the
        dataset's latest (the rule is in the module docstring)."""
        import os

        if self.workspace is not None:
            return self.workspace
        if os.environ.get(DATABASE_URL_ENV):
            return os.environ[DATABASE_URL_ENV]
        name = self.profile().name
        if not (self.sample or self.source):
            sample = [SAMPLE_PREFIX + name]
            found = [w for w in dataset_workspaces(name) if not _holds_source(w, sample)]
            return found[0] if found else default_workspace_dir(name)
        spec = [SAMPLE_PREFIX + name] if self.sample else list(self.source or [])
        base = default_workspace_dir(name)
        if _holds_source(base, spec):
            return base
        return default_workspace_dir(name, source_key(spec))


def _canonical(spec: list[str]) -> list[str]:
    """A source spec with its local paths made absolute (Hub ids and ``sample:`` unchanged)."""
    out = []
    for item in spec:
        p = Path(item).expanduser()
        out.append(str(p.resolve()) if not item.startswith(SAMPLE_PREFIX) and p.exists() else item)
    return out


def source_key(spec: list[str]) -> str:
    """The suffix of a source's own default workspace: ``sample`` for the bundled sample, else
    ``src-`` and 8 hex digits of the sha256 of the canonical spec (JSON list)."""
    if len(spec) == 1 and spec[0].startswith(SAMPLE_PREFIX):
        return "sample"
    digest = hashlib.sha256(json.dumps(_canonical(spec)).encode("utf-8", "surrogatepass")).hexdigest()
    return "src-" + digest[:8]


def _holds_source(folder: Path, spec: list[str]) -> bool:
    """True when the workspace in ``folder`` was last opened with this very source."""
    if not Workspace.exists(folder):
        return False
    try:
        with Workspace.open(folder, read_only=True) as peek:
            stored = peek.source_spec()
    except WorkspaceError:
        return False
    return stored is not None and (stored == spec or _canonical(stored) == _canonical(spec))


def load_spec(name: str, profile: Profile, spec: list[str], reason: str, *,
              hub_unreachable_why: str | None = None) -> Dataset:
    """Load a stored or given source spec; ``sample:NAME`` means the bundled sample.

    ``hub_unreachable_why``: for a Hub id, why the Hub is known to be unreachable (see
    ``loading.read_tables``).

    Raises:
        InputError: the source is unusable, or no sample is bundled for that name.
    """
    if len(spec) == 1 and spec[0].startswith(SAMPLE_PREFIX):
        which = spec[0][len(SAMPLE_PREFIX):]
        folder = resources.sample_dir(which)
        if folder is None:
            raise InputError(f"sample '{which}'", f"no bundled sample for '{which}' (only: ficha)")
        ds = loading.load(name, profile, [str(folder)], reason)
        ds.source = SourceInfo("sample", str(folder), reason)
        return ds
    return loading.load(name, profile, spec, reason, hub_unreachable_why=hub_unreachable_why)


def choose_and_load(opts: Options, stored: list[str] | None, *,
                    hub_wait: float | None = None) -> tuple[Dataset, list[str]]:
    """Pick the source (see module docstring), load it, and return it with its spec.

    ``hub_wait``: see ``load_default``; a Hub load still running after it is abandoned here
    (``open_review`` keeps it).
    """
    dataset, spec, _pending = _choose_and_load(opts, stored, hub_wait=hub_wait)
    return dataset, spec


def _choose_and_load(opts: Options, stored: list[str] | None, *,
                     hub_wait: float | None = None) -> tuple[Dataset, list[str], "HubLoad | None"]:
    profile = opts.profile()
    sample_spec = [SAMPLE_PREFIX + profile.name]
    if opts.sample:
        return load_spec(opts.name, profile, sample_spec, "asked for with --sample"), sample_spec, None
    if opts.source:
        return load_spec(opts.name, profile, opts.source, "given with --source"), list(opts.source), None
    if stored:
        return load_spec(opts.name, profile, stored,
                         f"resumed from the workspace {describe(opts.workspace_dir())}"), stored, None
    return load_default(opts, hub_wait=hub_wait)


class HubLoad:
    """A load of the dataset from the Hub, in a daemon thread (``load_default``).

    Attributes:
        repos: the Hub ids tried, in order.
        outcome: once done, one line for the curator (loaded, or why not); None while running.
        loaded: once done, True when a repo loaded (it is then in the local cache).
    """

    def __init__(self, opts: Options, profile: Profile, repos: list[str], *,
                 unreachable: str | None = None) -> None:
        """``unreachable``: as ``loading.read_hub``'s (None: probe first; ``loading.HUB_ANSWERS``:
        the Hub answered a probe just now)."""
        self.repos = repos
        self._unreachable = unreachable
        self.outcome: str | None = None
        self.loaded = False
        self._opts, self._profile = opts, profile
        self._result: tuple[Dataset, list[str]] | None = None
        self._failures: list[InputError] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mtcb-hub-load", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for repo in self.repos:
                try:
                    ds = load_spec(self._opts.name, self._profile, [repo],
                                   f"no workspace yet: loaded {repo} from the Hugging Face Hub or its cache",
                                   hub_unreachable_why=self._unreachable)
                except InputError as exc:
                    self._failures.append(exc)
                    if isinstance(exc, loading.HubSilent):
                        break  # the Hub stopped answering: the next repo would wait as long
                    continue
                self._result = (ds, [repo])
                self.loaded = True
                self.outcome = (f"{repo} has loaded from the Hugging Face Hub: open {self._opts.name} again to "
                                f"review it (the sample's decisions stay in the sample's workspace)")
                return
            self.outcome = "the Hugging Face Hub load failed: " + "; ".join(
                f"{repo}: {_short(exc.message)}" for repo, exc in zip(self.repos, self._failures, strict=False))
        except BaseException as exc:  # noqa: BLE001 - a daemon thread: say it rather than lose it
            self.outcome = f"the Hugging Face Hub load failed: {type(exc).__name__}: {_short(str(exc))}"
        finally:
            self._done.set()

    def wait(self, timeout: float | None) -> bool:
        """True once the load has finished (within ``timeout`` seconds; None: however long)."""
        return self._done.wait(timeout)

    def result(self) -> tuple[tuple[Dataset, list[str]] | None, list[InputError]]:
        """Once finished: ``((dataset, spec) or None, the failures of the repos tried before)``."""
        return self._result, list(self._failures)


#: Seconds the review app waits at most for a Hub that keeps answering (``load_default``).
HUB_WAIT_CAP = 20.0


def _wait_while_answering(job: HubLoad, quiet_s: float, cap: float, step_s: float = 0.05) -> bool:
    """Wait for ``job`` while the Hub keeps answering: True once it has finished; False when the
    Hub has been silent for ``quiet_s`` seconds or the monotonic time ``cap`` has passed."""
    from mtcb_curate.dataset import hub_requests

    while not job.wait(step_s):
        if hub_requests.silence() >= quiet_s or time.monotonic() >= cap:
            return False
    return True


def load_default(opts: Options, *, hub_wait: float | None = None
                 ) -> tuple[Dataset, list[str], HubLoad | None]:
    """Steps 4 and 5 of the module docstring: the dataset from the Hub (or its cache), else the
    bundled sample. Returns ``(dataset, spec, pending)``.

    ``hub_wait``: None waits for the Hub as long as it keeps answering (headless commands;
    ``hub_requests.patience`` gives up on a silent one). A number of seconds (the review app):
    when the Hub answers the probe but then has not answered the load's requests for
    ``hub_wait`` seconds (``hub_requests.silence``; a long download counts as silence), or the
    load has not finished within ``HUB_WAIT_CAP`` seconds, and a sample is bundled, the sample
    opens and the load goes on in the background: ``pending`` is its ``HubLoad``; else
    ``pending`` is None. A Hub that keeps answering is waited for, so a healthy Hub gives the
    real dataset, not the sample.

    Raises:
        InputError: nothing loads and no sample is bundled.
    """
    started = time.monotonic()
    profile = opts.profile()
    sample_spec = [SAMPLE_PREFIX + profile.name]
    orgs = opts.organisations if opts.organisations is not None else hub_organisations()
    candidates = profile.hub_candidates(orgs)
    loading.warm_up(candidates)
    why = loading.hub_unreachable()
    has_sample = resources.sample_dir(profile.name) is not None
    failures: list[InputError] = []
    if why is None and hub_wait is not None and has_sample:
        job = HubLoad(opts, profile, candidates, unreachable=loading.HUB_ANSWERS)
        if not _wait_while_answering(job, hub_wait, started + HUB_WAIT_CAP):
            names = " and ".join(candidates)
            detail = (f"the Hugging Face Hub has not finished loading {names} (it goes on in the "
                      f"background)")
            return load_spec(opts.name, profile, sample_spec, f"no workspace yet; {detail}: opened the bundled "
                                                              f"sample"), sample_spec, job
        result, failures = job.result()
        if result is not None:
            return result[0], result[1], None
    else:
        where = (f"its local cache (the Hugging Face Hub is unreachable: {why})" if why
                 else "the Hugging Face Hub or its cache")
        for repo in candidates:
            try:
                ds = load_spec(opts.name, profile, [repo], f"no workspace yet: loaded {repo} from {where}",
                               hub_unreachable_why=why or loading.HUB_ANSWERS)
                return ds, [repo], None
            except InputError as exc:
                failures.append(exc)
                if isinstance(exc, loading.HubSilent):
                    break  # the Hub stopped answering: the next repo would wait as long
    names = " and ".join(candidates)
    if why:
        detail = (f"the Hugging Face Hub is unreachable ({why}) and {names} "
                  f"{'is' if len(candidates) == 1 else 'are'} not in the local cache")
    else:
        detail = "; ".join(f"{repo} could not be loaded: {_short(exc.message)}"
                           for repo, exc in zip(candidates, failures, strict=False))
    if not has_sample:
        if len(failures) == 1 and not why:
            raise failures[0]
        raise InputError(", ".join(candidates), detail)
    return load_spec(opts.name, profile, sample_spec, f"no workspace yet; {detail}: opened the bundled sample"), \
        sample_spec, None


def _short(text: str, max_chars: int = 120) -> str:
    return text if len(text) <= max_chars else text[:max_chars - 3].rstrip() + "..."


def _refuse_row_problems(opts: Options, dataset: Dataset) -> None:
    """With ``strict``, the first row problem (and how many more) as an InputError."""
    if not opts.strict or not dataset.problems:
        return
    first, more = dataset.problems[0], len(dataset.problems) - 1
    raise InputError(first.file, first.message + (f" (and {more} more row problem{'s' if more > 1 else ''}; --strict)"
                                                  if more else " (--strict)"), row=first.row, field=first.field,
                     line=first.line)


def open_session(opts: Options) -> ReviewSession:
    """Load the chosen source, then open its workspace (taking the lock) and bind the two.

    The source is loaded before the workspace is opened or created, so refused input (or, with
    ``strict``, input with row problems) writes nothing: no folder, no file. To resume (neither
    ``--source`` nor ``--sample``), the stored source is first read from an existing workspace
    without writing to it.

    Raises:
        WorkspaceLocked: another instance holds the workspace.
        WorkspaceError: the workspace belongs to other data.
        InputError: the source is unusable (or, with ``strict``, has row problems).
    """
    return open_review(opts)[0]


def open_review(opts: Options, *, hub_wait: float | None = None) -> tuple[ReviewSession, HubLoad | None]:
    """``open_session`` for the review app: the Hub gets ``hub_wait`` seconds (see
    ``load_default``); returns the session and the Hub load still running, or None.

    Raises:
        as ``open_session``.
    """
    dataset, spec, ws_dir, pending = _choose(opts, hub_wait=hub_wait)
    if opts.read_only and not workspace_exists(ws_dir):
        raise WorkspaceError(f"{describe(ws_dir)}: no workspace here to open read-only")
    return _open_bound(opts, dataset, spec, ws_dir), pending


def _choose(opts: Options, *, hub_wait: float | None = None
            ) -> tuple[Dataset, list[str], Path | str, HubLoad | None]:
    """The loaded dataset, its spec, the workspace it goes with (see the module docstring) and
    the Hub load still running (or None). Nothing is written.

    Raises:
        InputError: the source is unusable (or, with ``strict``, has row problems).
        WorkspaceError: an existing workspace cannot be read.
    """
    ws_dir = opts.workspace_dir()
    fixed = opts.workspace is not None or is_database_url(ws_dir)
    if opts.read_only and fixed and not workspace_exists(ws_dir):
        raise WorkspaceError(f"{describe(ws_dir)}: no workspace here to open read-only")
    stored = None
    if workspace_exists(ws_dir) and not (opts.source or opts.sample):
        with open_workspace(ws_dir, read_only=True, curator=opts.curator) as peek:
            stored = peek.source_spec()
        if not fixed and stored == [SAMPLE_PREFIX + opts.profile().name]:
            stored = None  # a workspace of the sample never stands for the dataset (module docstring)
    dataset, spec, pending = _choose_and_load(opts, stored, hub_wait=hub_wait)
    _refuse_row_problems(opts, dataset)
    if not fixed and not (opts.source or opts.sample) and stored is None:
        ws_dir = _default_target(opts, spec)
    return dataset, spec, ws_dir, pending


def _default_target(opts: Options, spec: list[str]) -> Path:
    """The workspace of the default source once loaded: the sample's own for the bundled
    sample; else ``workspaces/NAME`` when it is free or holds this source, else the source's
    own (``NAME-src-HASH``)."""
    name = opts.profile().name
    if spec == [SAMPLE_PREFIX + name]:
        return Path(replace(opts, sample=True, source=None, workspace=None).workspace_dir())
    base = default_workspace_dir(name)
    if not Workspace.exists(base) or _holds_source(base, spec):
        return base
    return default_workspace_dir(name, source_key(spec))


def _open_bound(opts: Options, dataset: Dataset, spec: list[str], ws_dir: Path | str) -> ReviewSession:
    """Open (or create) the workspace ``ws_dir`` and bind it to the loaded dataset."""
    ws = open_workspace(ws_dir, read_only=opts.read_only, curator=opts.curator)
    try:
        # Refuses when another instance bound it to other data since the stored source was read.
        _bind(ws, dataset, spec)
    except BaseException:
        ws.close()
        raise
    return ReviewSession(dataset, ws)


def _bind(ws: Store, dataset: Dataset, spec: list[str]) -> None:
    fp = questions_fingerprint((p.question, p.answer, p.passage, p.doc_key) for p in dataset.pairs)
    ws.bind(dataset.name, spec, fp)


@contextmanager
def command_session(opts: Options, *, write: bool = False) -> Iterator[tuple[ReviewSession, bool]]:
    """A session for a headless command (verify, dedup, check, publish, generate).

    A workspace is used when ``--workspace`` names one, or when the workspace the app would
    open for these options exists (``Options.workspace_dir``: the source's own for ``--source``
    or ``--sample``, else the dataset's latest): its decisions and edits (a ``repair``, say)
    are then what the command sees. Otherwise the command runs on the source alone, over a
    throw-away workspace in a temporary folder: nothing is decided or edited, and with
    ``write=False`` nothing the command does is kept. Yields ``(session, has_workspace)``.

    Raises:
        WorkspaceLocked: ``write`` and another instance holds the workspace.
        WorkspaceError, InputError: as ``open_session``.
    """
    explicit = opts.workspace is not None or is_database_url(opts.workspace_dir())
    if explicit and not write and not workspace_exists(opts.workspace_dir()):
        raise WorkspaceError(f"{describe(opts.workspace_dir())}: no workspace here")
    dataset, spec, ws_dir, _pending = _choose(opts)
    if explicit or workspace_exists(ws_dir):
        session = _open_bound(replace(opts, read_only=not write), dataset, spec, ws_dir)
        try:
            yield session, True
        finally:
            session.workspace.close()
        return
    tmp = Path(tempfile.mkdtemp(prefix="mtcb-curate-"))
    try:
        session = _open_bound(replace(opts, read_only=False), dataset, spec, tmp)
        try:
            yield session, False
        finally:
            session.workspace.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
