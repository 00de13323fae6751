"""The Hub client: read the target's state, commit a plan, load it back; the only module of
the package tree that imports ``huggingface_hub`` or ``httpx2``.

Reading (``plan_publish``): the target's head, card and current ``corpus`` / ``questions``
configs are downloaded at the head's commit and loaded with ``datasets`` (never from a local
folder named like the repo id), then ``hub.plan.build_plan`` composes the plan over them.

Publishing (``publish``):

1. the gate: refused when the checklist failed, unless forced with a non-empty reason, which
   then goes into the card (``hub.plan.check_gate``);
2. the token from ``token=``, else ``HF_TOKEN`` or huggingface_hub's login (``get_token``). It
   is only handed to ``HfApi``/``datasets``: never printed, logged, stored, or put in a message;
3. the repo is created when missing (``repo_type="dataset"``, ``private``), the branch when
   ``revision`` names a missing one;
4. ONE ``HfApi.create_commit`` with the two parquet shards and the card, with
   ``parent_commit`` = the revision's head read just before (a concurrent change gives 412
   instead of being overwritten; a head that moved since the plan is refused before upload,
   since the merged card was based on the planned head);
5. the committed card and the files it names for both configs are downloaded from the Hub at
   the commit's sha (an explicit revision: a local folder named like the repo id is never
   read), loaded with ``datasets``, and their row counts and content hashes
   (``hub.layout.content_hash``) compared.

While the Hub is read or written, huggingface_hub's and datasets' own logging, warnings and
progress bars are kept off the terminal (``quiet_hub``); each request the client retries is
reported through ``on_retry`` as one line in our words (``Retry.line``).

Every failure (offline mode, no network, 401, 403, a missing repo that cannot be created,
409, 412, a connection dropped mid-upload) raises ``PublishError`` with one line that says
what to do (``_explain``). Nothing here writes to the workspace, so a failed publish can
simply be retried.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mtcb_curate.dataset.model import Dataset
from mtcb_curate.dataset.profiles import Profile
from mtcb_curate.hub import card as cardmod
from mtcb_curate.hub.errors import LicenseRequired, PublishError, PublishErrorKind as Kind
from mtcb_curate.hub.layout import README, config_entries, content_hash, data_file
from mtcb_curate.hub.plan import (
    COMMIT_MESSAGE,
    DEFAULT_REVISION,
    HubState,
    PublishPlan,
    build_plan,
    check_branch,
    check_gate,
    commit_description,
)
from mtcb_curate.dataset.hub_requests import HubNoAnswer, patience
from mtcb_curate.hub.quiet import Retry, quiet_datasets

#: Seconds a publish (or the reading of the Hub before it) waits for the Hub's next answer
#: before giving up (``dataset.hub_requests.patience``): a long upload that keeps being
#: answered is never cut.
HUB_PATIENCE = 60.0
from mtcb_curate.hub.tables import ColumnNames, build_tables, published_columns
from mtcb_curate.store.session import ReviewSession


def plan_publish(session: ReviewSession, *, repo_id: str | None = None, revision: str | None = None,
                 only_linked: bool = False, license: str | None = None,
                 checklist: Sequence[Mapping[str, Any]] | None = None, checklist_passed: bool | None = None,
                 regenerated: int | None = None, token: str | None = None, read_hub: bool = True,
                 accepted: Sequence[int] | None = None, on_retry: Callable[[str], None] | None = None) -> PublishPlan:
    """Build what a publish of ``session`` would commit to ``repo_id``, and its diff.

    Args:
        session: the review session (only read; the workspace is never written).
        repo_id: target dataset repo; default the profile's Hub id (``chonkie-ai/ficha``).
        revision: target branch; default ``main``. A missing branch is created from main at publish.
        only_linked: publish only the documents an accepted pair points at.
        license: a Hub licence id; else the profile's (``Profile.extra["license"]``), the target
            card's, or the source folder's card's. None found: ``plan.license`` is None and
            ``publish`` raises ``LicenseRequired``.
        checklist: the checklist results ``[{"id", "status", "message", "pairs"}]`` for the card.
        checklist_passed: the checklist's verdict (the gate; ``publish`` takes it again).
        regenerated: the number of regenerated pairs for the card (default: counted from origins).
        token: a Hub token for reading a private target; default ``HF_TOKEN`` / the login, or none.
        read_hub: read the target's current card and configs (needs the network). False gives
            an offline preview whose card is not merged with the Hub's; it cannot be published.
            The configs are downloaded at the head's commit and loaded from there, never from
            a local folder named like the repo id.
        accepted: the pair ids that count as accepted (default: the session's accepted pairs).
        on_retry: called with one line (``Retry.line``) each time huggingface_hub retries a
            request; the libraries' own logging, warnings and progress bars stay off meanwhile.

    Raises:
        PublishError: the Hub cannot be read (offline, network, 401, 403 ...), a text is not
            valid Unicode, or ``license`` is not a licence id.
    """
    from huggingface_hub.utils import validate_repo_id

    ds = session.dataset
    profile = ds.profile
    repo_id = repo_id or profile.hub_id
    revision = revision or DEFAULT_REVISION
    try:
        validate_repo_id(repo_id)
    except ValueError as exc:
        raise PublishError(Kind.INPUT,
                           f"not a Hub repo id: {repo_id!r} ({' '.join(str(exc).split())[:120]})") from None
    check_branch(revision)
    names = published_columns(ds, session.pairs)
    tables = build_tables(session, only_linked=only_linked, accepted=accepted)
    hub = _read_hub(repo_id, revision, token, names, profile, ds, on_retry) if read_hub else None
    return build_plan(session, hub, repo_id=repo_id, revision=revision, tables=tables, only_linked=only_linked,
                      license=license, checklist=checklist, checklist_passed=checklist_passed,
                      regenerated=regenerated, accepted=accepted)


# ---------------------------------------------------------------------------------------------
# Talking to the Hub



def _ensure_online() -> None:
    from huggingface_hub import constants

    if constants.is_offline_mode():
        raise PublishError(Kind.OFFLINE, "offline mode is on (HF_HUB_OFFLINE=1): unset HF_HUB_OFFLINE to reach the "
                                         "Hugging Face Hub, then publish again; nothing was changed")


def _status(exc: BaseException) -> int | None:
    resp = getattr(exc, "response", None)
    return getattr(resp, "status_code", None)


def _is_missing_repo(exc: BaseException) -> bool:
    """A RepositoryNotFoundError that means "no such repo (visible to you)", not a bad token."""
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    if not isinstance(exc, RepositoryNotFoundError) or isinstance(exc, GatedRepoError):
        return False
    return _status(exc) == 404 or (_status(exc) == 401 and "Invalid credentials" not in (exc.server_message or ""))


def _read_hub(repo_id: str, revision: str, token: str | None, names: ColumnNames, profile: Profile,
              dataset: Dataset, on_retry: Callable[[str], None] | None = None) -> HubState:
    _ensure_online()
    from huggingface_hub import HfApi, get_token
    from huggingface_hub.errors import RevisionNotFoundError

    state = HubState()
    token = token or get_token() or None
    api = HfApi(token=token)
    step = f"reading {repo_id}"

    def retried(retry: Retry) -> None:
        if on_retry is not None:
            on_retry(retry.line(step))

    try:
        with quiet_hub(retried), patience(HUB_PATIENCE):
            try:
                info = api.repo_info(repo_id, repo_type="dataset", revision=revision)
                state.repo_exists = state.revision_exists = True
            except RevisionNotFoundError:
                info = api.repo_info(repo_id, repo_type="dataset")
                state.repo_exists = True
            except Exception as exc:
                if not _is_missing_repo(exc):
                    raise
                info = None
            with tempfile.TemporaryDirectory(prefix="mtcb-publish-") as tmp:
                if info is not None:
                    state.base_sha = info.sha
                    files = {s.rfilename for s in (info.siblings or [])}
                    if README in files:
                        step = f"reading {repo_id}/README.md"
                        path = api.hf_hub_download(repo_id, README, repo_type="dataset", revision=info.sha,
                                                   cache_dir=tmp)
                        state.card = Path(path).read_text(encoding="utf-8", errors="replace")
                    try:
                        configs = cardmod.card_configs(state.card)
                    except cardmod.CardError as exc:
                        raise PublishError(Kind.CARD, f"{repo_id}: {exc}") from None
                    present = [c for c in (profile.corpus_config, profile.questions_config) if c in configs]
                    if present:
                        step = f"reading the current {' and '.join(present)} configs of {repo_id}"
                        folder = _download_revision(repo_id, info.sha, state.card, present, token, tmp)
                    for config in present:
                        rows = _load_rows(folder, config, tmp)
                        if rows is None:
                            state.known[config] = False
                            state.notes.append(f"the current '{config}' config of {repo_id} could not be "
                                               "loaded: its rows count as added")
                        else:
                            state.rows[config] = rows
                    for config in (profile.corpus_config, profile.questions_config):
                        old = configs.get(config, {}).get("data_files")
                        new = config_entries((config,))[0]["data_files"]
                        if old is not None and old != new:
                            state.notes.append(f"the '{config}' config's earlier data files stay in the "
                                               f"repository but are no longer loaded (now {data_file(config)})")
                src = dataset.source
                if src.kind == "hub" and src.location != repo_id:
                    try:  # the source repo's card, for its licence only; best effort
                        path = api.hf_hub_download(src.location, README, repo_type="dataset", cache_dir=tmp)
                        state.source_card = Path(path).read_text(encoding="utf-8", errors="replace")
                    except Exception:  # noqa: BLE001 - a missing source card only means no licence from it
                        state.source_card = None
    except PublishError:
        raise
    except Exception as exc:
        raise _explain(exc, step=step, repo_id=repo_id, revision=revision) from exc
    return state


def _data_file_patterns(data_files: Any) -> list[str]:
    """The path patterns of one card ``configs`` entry's ``data_files`` (a string, a list of
    strings or of ``{split, path}``, or ``{split: path(s)}``), without a leading ``./``."""
    out: list[str] = []

    def add(value: Any) -> None:
        if isinstance(value, str):
            out.append(value.removeprefix("./"))
        elif isinstance(value, Mapping):
            add(value.get("path") if "path" in value else list(value.values()))
        elif isinstance(value, (list, tuple)):
            for v in value:
                add(v)

    add(data_files)
    return out


def _download_revision(repo_id: str, sha: str, card: str | None, configs: Sequence[str], token: str | None,
                       tmp: str | Path) -> Path:
    """Download ``README.md`` and every file the ``configs`` entries of ``card`` name, from the
    Hub at commit ``sha`` (an explicit revision, never a path lookup: a local folder named like
    the repo id is never read), into a new folder under ``tmp``; return that folder, which
    loads with ``datasets.load_dataset(folder, config)`` as the repo loads at ``sha``.

    The downloaded card is the Hub's; its ``configs`` are cut down to ``configs`` (the other
    configs' files, e.g. gacha's ``raw``, are not downloaded, and ``datasets`` refuses a local
    folder whose card names missing files).

    Raises:
        whatever huggingface_hub raises (network, HTTP, offline mode); the caller explains it.
        CardError: a card's front matter is invalid.
    """
    from huggingface_hub import snapshot_download

    from mtcb_curate.hub.layout import front_matter

    entries = cardmod.card_configs(card)
    patterns = [README]
    for config in configs:
        patterns += _data_file_patterns(entries.get(config, {}).get("data_files"))
    folder = Path(tmp).resolve() / "revision"
    snapshot_download(repo_id, repo_type="dataset", revision=sha, allow_patterns=patterns, local_dir=str(folder),
                      token=token)
    readme = folder / README
    hub_card = readme.read_text(encoding="utf-8", errors="replace") if readme.is_file() else None
    meta, body = cardmod.split_card(hub_card)
    hub_entries = cardmod.card_configs(hub_card)
    meta["configs"] = [hub_entries[c] for c in configs if c in hub_entries]
    readme.write_text(front_matter(meta) + body, encoding="utf-8")
    return folder


def _load_local(folder: Path, config: str, cache_dir: str | Path) -> Any:
    """``datasets.load_dataset(folder, config, split="train")`` on a downloaded revision (an
    absolute path, so nothing is looked up relative to the current directory)."""
    import datasets

    with quiet_datasets():
        return datasets.load_dataset(str(Path(folder).resolve()), config, split="train",
                                     cache_dir=str(Path(cache_dir) / "datasets"))


def _load_rows(folder: Path, config: str, cache_dir: str | Path) -> list[dict[str, Any]] | None:
    """A config's train rows of a downloaded revision (``_download_revision``) through
    ``datasets``, as MTCB loads it; None when it does not load."""
    try:
        ds = _load_local(folder, config, cache_dir)
    except Exception:  # noqa: BLE001 - a config that does not load counts as unreadable
        return None
    return ds.data.table.to_pylist()




_hf_bars_lock = threading.RLock()
_hf_bars: dict[str, Any] = {"depth": 0}


class quiet_hub(quiet_datasets):
    """Keep huggingface_hub's and datasets' own output out of the terminal for the duration:
    ``quiet_datasets`` (their loggers, ``datasets``' progress bars, Python warnings) plus
    huggingface_hub's progress bars. Retries that huggingface_hub makes are handed to
    ``on_retry`` (a ``Retry``) instead of being logged.

    Re-entrant and usable from several threads at once: the first entry saves the libraries'
    settings, the last exit restores them.

    ``with quiet_hub(on_retry=lambda r: print(r.line("uploading"))): ...``
    """

    def __enter__(self) -> "quiet_hub":
        import huggingface_hub.utils as hf_utils

        super().__enter__()
        with _hf_bars_lock:
            if _hf_bars["depth"] == 0:
                _hf_bars["saved"] = hf_utils.disable_progress_bars()
            _hf_bars["depth"] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            with _hf_bars_lock:
                _hf_bars["depth"] -= 1
                if _hf_bars["depth"] == 0:
                    _hf_bars.pop("saved").__exit__(None, None, None)
        finally:
            super().__exit__(*exc)



def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in out and len(out) < 20:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out




def _server_message(exc: BaseException) -> str:
    msg = getattr(exc, "server_message", None) or ""
    msg = " ".join(str(msg).split())
    return f": {msg[:160]}" if msg else ""


def _explain(exc: BaseException, *, step: str, repo_id: str, revision: str, done: Sequence[str] = ()) -> PublishError:
    """One actionable ``PublishError`` for a failure of the Hub client (never naming the token)."""
    import httpx2
    from huggingface_hub import constants
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    namespace = repo_id.split("/")[0]
    nothing = "nothing was committed" + (f" ({'; '.join(done)})" if done else "")
    chain = _chain(exc)
    if any(isinstance(e, OfflineModeIsEnabled) for e in chain):
        return PublishError(Kind.OFFLINE, f"offline mode is on (HF_HUB_OFFLINE=1) while {step}: unset HF_HUB_OFFLINE, "
                                          f"then publish again; {nothing}")
    http = next((e for e in chain if isinstance(e, HfHubHTTPError) and _status(e) is not None), None)
    if http is not None:
        status, srv = _status(http), _server_message(http)
        if step.startswith("creating ") and status in (403, 404):
            return PublishError(Kind.NOT_FOUND, f"dataset repo {repo_id} does not exist and could not be created "
                                                f"({status}{srv}): create it on the Hub, or check the repo id and your "
                                                f"token's rights on '{namespace}'; {nothing}")
        if status == 401:
            return PublishError(Kind.AUTH, f"the Hub refused the token (401{srv}) while {step}: set HF_TOKEN to a valid "
                                           f"token or run `hf auth login`, then publish again; {nothing}")
        if status == 403:
            return PublishError(Kind.FORBIDDEN, f"the token may not write to {repo_id} (403{srv}) while {step}: use a "
                                                f"token with write access to '{namespace}', then publish again; {nothing}")
        if status == 404:
            return PublishError(Kind.NOT_FOUND, f"dataset repo {repo_id} (revision {revision}) was not found (404{srv}) "
                                                f"while {step}: check the repo id and your rights on '{namespace}'; "
                                                f"{nothing}")
        if status == 409:
            return PublishError(Kind.CONFLICT, f"the Hub reported a conflict on {repo_id} (409{srv}) while {step}: "
                                               f"another operation is under way; wait, then publish again; {nothing}")
        if status == 412:
            return PublishError(Kind.CHANGED, f"{repo_id}@{revision} changed on the Hub since it was read (412{srv}): "
                                              f"plan again to merge the new version, then publish; {nothing}")
        if status is not None and (status == 429 or status >= 500):
            return PublishError(Kind.SERVER, f"the Hub answered {status}{srv} while {step}: try again later; {nothing}")
        return PublishError(Kind.FAILED, f"the Hub answered {status}{srv} while {step}; {nothing}")
    for e in chain:
        if isinstance(e, (httpx2.ConnectError, httpx2.ConnectTimeout)):
            return PublishError(Kind.NETWORK, f"cannot reach the Hugging Face Hub at {constants.ENDPOINT} while {step} "
                                              f"(no network?): check the connection or HF_ENDPOINT, then publish again; "
                                              f"{nothing}")
    silent = next((e for e in chain if isinstance(e, HubNoAnswer)), None)
    if silent is not None:
        return PublishError(Kind.SERVER, f"{silent} while {step}: try again later (if the commit did land, the "
                                         f"retry says the Hub changed: plan again then); the workspace is unchanged")
    for e in chain:
        if isinstance(e, (httpx2.TransportError, ConnectionError)):
            detail = " ".join(str(e).split())[:120] or type(e).__name__
            return PublishError(Kind.DROPPED, f"the connection to the Hub dropped while {step} ({detail}): run publish "
                                              f"again (if the commit did land, the retry says the Hub changed: plan "
                                              f"again then); the workspace is unchanged")
    detail = " ".join(str(exc).split())[:200]
    return PublishError(Kind.FAILED, f"publishing to {repo_id} failed while {step}: {type(exc).__name__}: {detail}")



@dataclass(frozen=True, slots=True)
class PublishResult:
    """A verified publish.

    Attributes:
        commit_url: the commit's URL on the Hub (print this).
        commit_sha: the commit id (40 hex) both configs were loaded back from.
        pr_url: the pull request's URL with ``create_pr``, else None.
        repo_id, revision: the target.
        created_repo, created_branch: what the publish created before committing.
        corpus_rows, question_rows: row counts, equal locally and as loaded back.
    """

    commit_url: str
    commit_sha: str
    pr_url: str | None
    repo_id: str
    revision: str
    created_repo: bool
    created_branch: bool
    corpus_rows: int
    question_rows: int


def _token(token: str | None) -> str:
    if token:
        return token
    from huggingface_hub import get_token

    found = get_token()
    if not found:
        raise PublishError(Kind.AUTH, "no Hugging Face token: set HF_TOKEN or run `hf auth login`, then publish again; "
                                      "nothing was changed")
    return found


def publish(plan: PublishPlan, *, gate_passed: bool, force: bool = False, reason: str | None = None,
            private: bool = False, create_pr: bool = False, revision: str | None = None,
            token: str | None = None, on_retry: Callable[[str], None] | None = None) -> PublishResult:
    """Commit ``plan`` to the Hub in one commit, then load both configs back and compare.

    Args:
        plan: from ``plan_publish`` with ``read_hub=True``.
        gate_passed: the checklist's verdict.
        force, reason: publish although the gate failed; the reason goes into the card.
        private: create the repo private when it does not exist. An existing PUBLIC repo is
            refused rather than published to, since private data was asked for.
        create_pr: open a pull request instead of committing to the branch.
        revision: must equal ``plan.revision`` when given (the card was merged over that branch).
        token: a Hub token; default ``HF_TOKEN`` or huggingface_hub's login. Never printed,
            logged or stored.
        on_retry: called with one line (``Retry.line``, e.g. "the Hub answered 503 while
            uploading to me/x: trying again in 1 s (retry 1 of 5)") each time huggingface_hub
            retries a request. The libraries' own logging, warnings and progress bars are kept
            out of the terminal for the whole publish (``quiet_hub``).

    Returns:
        ``PublishResult`` with the commit URL.

    Raises:
        PublishError: refused by the gate, no licence (``LicenseRequired``), offline, no
            network, 401, 403, missing repo, 409 (also when creating a repo answers 409 and the
            repo still cannot be read), 412 or a head moved since the plan, a
            connection dropped mid-upload, or a load-back that does not match. The message is
            one line; the workspace is never written, so the publish can be retried.
        ValueError: ``revision`` differs from the plan's.
    """
    force_reason = check_gate(gate_passed, force, reason)
    if revision is not None and revision != plan.revision:
        raise ValueError(f"the plan was made for revision {plan.revision!r}, not {revision!r}: plan again")
    if plan.license is None:
        raise LicenseRequired(plan.dataset_name)
    if not plan.hub_read:
        raise PublishError(Kind.CHANGED, "this plan was made without reading the Hub (read_hub=False): plan again "
                                         "with the Hub reachable, then publish")
    files = plan.files(gate_passed=gate_passed, force_reason=force_reason)
    _ensure_online()
    token = _token(token)

    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import RevisionNotFoundError

    api = HfApi(token=token)
    repo_id, rev = plan.repo_id, plan.revision
    done: list[str] = []
    created_repo = created_branch = False
    step = "checking the token"

    def retried(retry: Retry) -> None:
        if on_retry is not None:
            on_retry(retry.line(step))

    with quiet_hub(retried), patience(HUB_PATIENCE):
        try:
            api.whoami()
            step = f"reading {repo_id}"
            try:
                info = api.repo_info(repo_id, repo_type="dataset")
            except Exception as exc:
                if not _is_missing_repo(exc):
                    raise
                info = None
            if info is None:
                step = f"creating {repo_id}"
                created_repo = _create_repo(api, repo_id, private)
                if created_repo:
                    done.append(f"the empty repo {repo_id} was created")
                step = f"reading {repo_id}"
                info = api.repo_info(repo_id, repo_type="dataset")
            if private and not info.private and not created_repo:
                raise PublishError(Kind.VISIBILITY, f"{repo_id} exists and is public; --private only applies to a new "
                                                    "repo: make it private on the Hub or drop --private; nothing was changed")
            if rev != DEFAULT_REVISION:
                try:
                    api.repo_info(repo_id, repo_type="dataset", revision=rev)
                except RevisionNotFoundError:
                    step = f"creating branch {rev} of {repo_id}"
                    api.create_branch(repo_id, repo_type="dataset", branch=rev, exist_ok=True)
                    created_branch = True
                    done.append(f"branch {rev} was created")
            step = f"reading the head of {repo_id}@{rev}"
            head_info = api.repo_info(repo_id, repo_type="dataset", revision=rev)
            head = head_info.sha
            moved = (head != plan.base_sha) if plan.base_sha is not None else any(
                s.rfilename != ".gitattributes" for s in (head_info.siblings or []))
            if moved:
                raise PublishError(Kind.CHANGED, f"{repo_id}@{rev} changed on the Hub since the plan (now at "
                                                 f"{str(head)[:12]}): plan again to merge the new version, then "
                                                 "publish; nothing was committed")
            step = f"uploading to {repo_id}"
            operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=data) for path, data in files.items()]
            info_commit = api.create_commit(
                repo_id, operations, commit_message=COMMIT_MESSAGE,
                commit_description=commit_description(plan, force_reason), repo_type="dataset", revision=rev,
                create_pr=create_pr, parent_commit=head,
            )
        except PublishError:
            raise
        except Exception as exc:
            raise _explain(exc, step=step, repo_id=repo_id, revision=rev, done=done) from exc

        sha = info_commit.oid
        step = f"loading {repo_id}@{sha[:12]} back"
        _verify(plan, sha, token, files[README])
    return PublishResult(commit_url=info_commit.commit_url, commit_sha=sha, pr_url=info_commit.pr_url,
                         repo_id=repo_id, revision=rev, created_repo=created_repo, created_branch=created_branch,
                         corpus_rows=plan.corpus.num_rows, question_rows=plan.questions.num_rows)


def _create_repo(api: Any, repo_id: str, private: bool) -> bool:
    """Create the dataset repo ``repo_id``; True when this call created it, False when the Hub
    answered 409 (it exists: created meanwhile by someone else) and the repo can be read.

    A 409 is handled here rather than by ``create_repo(exist_ok=True)``, which reads a ``url``
    from the answer and fails with ``KeyError: 'url'`` when the Hub sends none.

    Raises:
        PublishError: (kind ``conflict``) 409 and the repo cannot be read (hidden from the
            token, or another operation is under way); the other errors propagate.
    """
    from huggingface_hub.errors import HfHubHTTPError

    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=False)
        return True
    except HfHubHTTPError as exc:
        if _status(exc) != 409:
            raise
        conflict = exc
    try:
        api.repo_info(repo_id, repo_type="dataset")
    except Exception as exc:
        if not _is_missing_repo(exc):
            raise
        namespace = repo_id.split("/")[0]
        raise PublishError(Kind.CONFLICT, f"the Hub refused to create {repo_id} (409{_server_message(conflict)}): it "
                                          f"may exist but be hidden from your token, or another operation on it is "
                                          f"under way; check the repo id and your token's rights on '{namespace}', "
                                          "wait, then publish again; nothing was committed") from None
    return False



def _verify(plan: PublishPlan, sha: str, token: str, readme: bytes) -> None:
    """Load both configs back from commit ``sha`` on the Hub and compare row counts and
    content hashes.

    The files the committed card (``readme``) names for the two configs are downloaded at the
    revision ``sha`` (``_download_revision``: an explicit revision, never a path lookup, so a
    local folder named like the repo id is never read), then loaded with ``datasets``.

    Raises:
        PublishError: (kind ``verify``) they do not download, do not load or do not match;
            the commit exists.
    """
    where = f"{plan.repo_id}@{sha[:12]}"
    configs = (plan.corpus_config, plan.questions_config)
    with tempfile.TemporaryDirectory(prefix="mtcb-verify-") as tmp:
        try:
            folder = _download_revision(plan.repo_id, sha, readme.decode("utf-8", "replace"), configs, token, tmp)
        except Exception as exc:
            http = next((e for e in _chain(exc) if _status(e) is not None), None)
            cause = (f"the Hub answered {_status(http)}{_server_message(http)}" if http is not None else
                     f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}")
            raise PublishError(Kind.VERIFY, f"committed {where}, but it could not be downloaded back to verify it "
                                            f"({cause}): check the repository, then publish again") from exc
        for config, table, expected in ((plan.corpus_config, plan.corpus, plan.corpus_hash),
                                        (plan.questions_config, plan.questions, plan.questions_hash)):
            try:
                ds = _load_local(folder, config, tmp)
            except Exception as exc:
                detail = " ".join(str(exc).split())[:160]
                raise PublishError(Kind.VERIFY, f"committed {where}, but the '{config}' config does not load back "
                                                f"({type(exc).__name__}: {detail}): check the repository, then publish "
                                                "again") from exc
            got = ds.data.table
            if ds.num_rows != table.num_rows or content_hash(got) != expected:
                raise PublishError(Kind.VERIFY, f"committed {where}, but the '{config}' config loads back with "
                                                f"{ds.num_rows:,} rows (expected {table.num_rows:,}) or other content: "
                                                "check the repository, then publish again")
