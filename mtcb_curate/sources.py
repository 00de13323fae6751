"""Which source a command opens, and why; then the dataset and its workspace, opened together.

Order for ``mtcb-curate NAME`` (first that applies):

1. ``--sample``: the bundled sample (``sample_data/NAME``);
2. ``--source ...``: that folder, file pair or Hub repo id;
3. the workspace's own source, when the workspace exists (resume);
4. the profile's Hub id (``chonkie-ai/NAME``) through ``datasets``, from the Hub or its cache;
5. the bundled sample, when step 4 fails and the dataset has one.

The reason is kept in ``Dataset.source.reason`` and shown on screen.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mtcb_curate import loading, resources
from mtcb_curate.errors import InputError, WorkspaceError
from mtcb_curate.model import Dataset, SourceInfo
from mtcb_curate.profiles import Profile, get_profile
from mtcb_curate.session import ReviewSession
from mtcb_curate.workspace import Workspace, default_workspace_dir, questions_fingerprint

SAMPLE_PREFIX = "sample:"


@dataclass
class Options:
    """What the command line says about the data and the workspace.

    Attributes:
        name: dataset name (``ficha``) or Hub id.
        source: explicit source (one folder or repo id, or two files), or None.
        sample: open the bundled sample.
        workspace: workspace folder, or None for the default one.
        read_only: open the workspace without writing.
        columns: column overrides for ``Profile.with_overrides``.
    """

    name: str
    source: list[str] | None = None
    sample: bool = False
    workspace: Path | None = None
    read_only: bool = False
    columns: dict[str, str | None] = field(default_factory=dict)

    def profile(self) -> Profile:
        """The dataset profile with the column overrides applied."""
        return get_profile(self.name).with_overrides(**self.columns)

    def workspace_dir(self) -> Path:
        """The workspace folder (``--workspace`` or the per-dataset default)."""
        return self.workspace if self.workspace is not None else default_workspace_dir(self.profile().name)


def load_spec(name: str, profile: Profile, spec: list[str], reason: str) -> Dataset:
    """Load a stored or given source spec; ``sample:NAME`` means the bundled sample.

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
    return loading.load(name, profile, spec, reason)


def choose_and_load(opts: Options, stored: list[str] | None) -> tuple[Dataset, list[str]]:
    """Pick the source (see module docstring), load it, and return it with its spec."""
    profile = opts.profile()
    sample_spec = [SAMPLE_PREFIX + profile.name]
    if opts.sample:
        return load_spec(opts.name, profile, sample_spec, "the bundled sample (--sample)"), sample_spec
    if opts.source:
        return load_spec(opts.name, profile, opts.source, "given with --source"), list(opts.source)
    if stored:
        return load_spec(opts.name, profile, stored, f"resumed from the workspace {opts.workspace_dir()}"), stored
    try:
        ds = load_spec(opts.name, profile, [profile.hub_id],
                       f"no workspace yet: loaded {profile.hub_id} from the Hugging Face Hub or its cache")
        return ds, [profile.hub_id]
    except InputError as exc:
        if resources.sample_dir(profile.name) is None:
            raise
        reason = f"{profile.hub_id} could not be loaded ({exc.message[:120]}); opened the bundled sample instead"
        return load_spec(opts.name, profile, sample_spec, reason), sample_spec


def open_session(opts: Options) -> ReviewSession:
    """Open the workspace (taking its lock), load the chosen source, and bind the two.

    Raises:
        WorkspaceLocked: another instance holds the workspace.
        WorkspaceError: the workspace belongs to other data.
        InputError: the source is unusable.
    """
    ws_dir = opts.workspace_dir()
    if opts.read_only and not Workspace.exists(ws_dir):
        raise WorkspaceError(f"{ws_dir}: no workspace here to open read-only")
    ws = Workspace.open(ws_dir, read_only=opts.read_only)
    try:
        dataset, spec = choose_and_load(opts, ws.source_spec())
        fp = questions_fingerprint((p.question, p.answer, p.passage, p.doc_key) for p in dataset.pairs)
        ws.bind(dataset.name, spec, fp)
    except BaseException:
        ws.close()
        raise
    return ReviewSession(dataset, ws)


@contextmanager
def command_session(opts: Options, *, write: bool = False) -> Iterator[tuple[ReviewSession, bool]]:
    """A session for a headless command (verify, dedup, check, publish, generate).

    A workspace is used when ``--workspace`` names one, or when neither ``--source`` nor
    ``--sample`` is given and the dataset's default workspace exists (its decisions and edits
    are then what the command sees). Otherwise the command runs on the source alone, over a
    throw-away workspace in a temporary folder: nothing is decided or edited, and with
    ``write=False`` nothing the command does is kept. Yields ``(session, has_workspace)``.

    Raises:
        WorkspaceLocked: ``write`` and another instance holds the workspace.
        WorkspaceError, InputError: as ``open_session``.
    """
    explicit = opts.workspace is not None
    default_used = not (opts.source or opts.sample) and Workspace.exists(opts.workspace_dir())
    if explicit or default_used:
        if not write and not Workspace.exists(opts.workspace_dir()):
            raise WorkspaceError(f"{opts.workspace_dir()}: no workspace here")
        session = open_session(Options(**{**opts.__dict__, "read_only": not write}))
        try:
            yield session, True
        finally:
            session.workspace.close()
        return
    tmp = Path(tempfile.mkdtemp(prefix="mtcb-curate-"))
    try:
        session = open_session(Options(**{**opts.__dict__, "workspace": tmp, "read_only": False}))
        try:
            yield session, False
        finally:
            session.workspace.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
