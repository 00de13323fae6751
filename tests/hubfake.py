"""A loopback protocol fake of the Hugging Face Hub, for DATASET repos, for tests only.

This is a PROTOCOL FAKE, not an emulator: it has NO AUTH (any token, or none, is accepted and
every caller may read and write every repo), NO XET (clients must run with
``HF_HUB_DISABLE_XET=1``, see :meth:`HubFake.env`) and NO SERVER-SIDE VALIDATION (README YAML,
file names, gitattributes, sizes and quotas are not checked the way the real Hub checks them).
It exists so that the real ``huggingface_hub`` / ``datasets`` client code can be exercised
offline against ``HF_ENDPOINT=http://127.0.0.1:PORT``. Never point anything but tests at it.

It is a stdlib ``ThreadingHTTPServer`` bound to 127.0.0.1 on an ephemeral port, serving an
in-memory store ``repos[repo_id] -> refs {branch: commit sha} + commits {sha: {path: bytes}}``
(optionally mirrored to ``root/<repo_id>/<branch>/`` for inspection). ``main`` is the default
branch; commit ids are 40-hex sha1 digests.

Endpoints (``{repo}`` is ``namespace/name``; revisions are URL-decoded, so
``refs%2Fconvert%2Fparquet`` works):

Reads
    GET  /api/datasets/{repo}                          repo info (``?blobs=true`` adds sizes/lfs)
    GET  /api/datasets/{repo}/revision/{rev}           repo info at a revision
    GET  /api/datasets/{repo}/tree/{rev}[/{path}]      tree listing (``recursive``, ``expand``)
    POST /api/datasets/{repo}/paths-info/{rev}         form or JSON ``paths`` (+ ``expand``)
    GET  /api/datasets/{repo}/refs                     branches / converts / tags / pullRequests
    GET  /api/datasets/{repo}/commits/{rev}            first-parent history
    HEAD|GET /datasets/{repo}/resolve/{rev}/{path}     file bytes; ETag, X-Repo-Commit, Range
    GET  /api/datasets/{repo}/parquet[...]             always 404 (no parquet conversion)
Writes
    GET  /api/whoami-v2
    POST /api/repos/create                             409 when the repo exists
    DELETE /api/repos/delete
    POST /api/validate-yaml                            always valid
    POST /api/datasets/{repo}/preupload/{rev}          uploadMode "regular" | "lfs"
    POST /datasets/{repo}.git/info/lfs/objects/batch   basic transfer, hrefs on this server
    PUT  /__lfs__/{oid}                                raw bytes of one LFS object (sha256 checked)
    POST /__lfs__/verify                               LFS verify action
    POST /api/datasets/{repo}/commit/{rev}             NDJSON header/file/lfsFile/deletedFile/
                                                       deletedFolder; ``parentCommit`` -> 412
    POST|DELETE /api/datasets/{repo}/branch/{branch}

Anything else is answered 404 and recorded in :attr:`HubFake.unknown_requests`.
Failure injection: :meth:`HubFake.fail_next` makes the next N matching requests answer a given
status (401, 403, 404, 409, 412, 500, ...) or drop the connection without an answer;
:meth:`HubFake.clear_failures` forgets the rules not used up (a fake shared by several tests).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import shutil
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

log = logging.getLogger("hubfake")

LFS_THRESHOLD = 10 * 1024 * 1024
# Extensions the Hub's default .gitattributes sends to LFS.
LFS_SUFFIXES = (
    ".parquet", ".arrow", ".bin", ".safetensors", ".pt", ".pth", ".ckpt", ".h5", ".npy", ".npz",
    ".pkl", ".pickle", ".zip", ".gz", ".tgz", ".tar", ".zst", ".xz", ".7z", ".bz2", ".lz4",
    ".onnx", ".msgpack", ".model", ".tflite", ".ot", ".joblib", ".wasm", ".mp3", ".wav", ".ogg",
    ".flac", ".jpg", ".jpeg", ".png", ".webp", ".mp4", ".webm", ".db", ".lance",
)
DEFAULT_GITATTRIBUTES = b"".join(
    f"*{ext} filter=lfs diff=lfs merge=lfs -text\n".encode() for ext in LFS_SUFFIXES
)


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "000Z"


def _lfs_pointer(sha256: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def _card_data(readme: bytes | None) -> dict | None:
    """Parse the YAML front matter of a README (None when absent or invalid)."""
    if not readme:
        return None
    text = readme.decode("utf-8", errors="replace")
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        return None
    try:
        import yaml

        data = yaml.safe_load(text[3:end])
    except Exception:  # noqa: BLE001 - a fake: invalid YAML is simply "no card data"
        return None
    return data if isinstance(data, dict) else None


@dataclass
class Blob:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def pointer(self) -> bytes:
        return _lfs_pointer(self.sha256, len(self.data))

    @property
    def oid(self) -> str:
        """Git blob id as the Hub reports it (of the pointer file for LFS files)."""
        return git_blob_sha1(self.pointer if self.lfs else self.data)

    @property
    def etag(self) -> str:
        return self.sha256 if self.lfs else git_blob_sha1(self.data)


@dataclass
class Commit:
    sha: str
    parent: str | None
    title: str
    description: str
    date: str
    files: dict[str, Blob]


@dataclass
class Repo:
    repo_id: str
    private: bool = False
    created_at: str = field(default_factory=_now_iso)
    refs: dict[str, str] = field(default_factory=dict)  # branch/ref name -> commit sha
    commits: dict[str, Commit] = field(default_factory=dict)
    pr_count: int = 0


@dataclass
class _FailRule:
    prefix: str
    status: int | str
    remaining: int
    method: str | None
    message: str
    error_code: str | None


class _HTTPError(Exception):
    def __init__(self, status: int, message: str, error_code: str | None = None,
                 headers: dict[str, str] | None = None, extra: dict[str, Any] | None = None):
        super().__init__(message)
        self.extra = extra or {}
        self.status = status
        self.message = message
        self.error_code = error_code
        self.headers = headers or {}


def _is_lfs(path: str, size: int, sample: bytes = b"", threshold: int = LFS_THRESHOLD) -> bool:
    return size >= threshold or path.lower().endswith(LFS_SUFFIXES) or b"\x00" in sample[:512]


class HubFake:
    """Loopback fake of the Hub's dataset-repo protocol. See the module docstring."""

    def __init__(self, root: Path | None = None, *, lfs_threshold: int = LFS_THRESHOLD, port: int = 0):
        self.root = Path(root) if root is not None else None
        self.port = port
        self.lfs_threshold = lfs_threshold
        self.repos: dict[str, Repo] = {}
        self.lfs_objects: dict[str, bytes] = {}  # sha256 -> bytes uploaded via PUT
        self.requests: list[tuple[str, str]] = []  # (method, path without query)
        self.unknown_requests: list[tuple[str, str, str]] = []  # (method, path, query)
        # every request with its query string and answered status (None: dropped), for debugging
        self.request_log: list[dict[str, Any]] = []
        # (repo_id, revision, header) of every commit request that reached the store, in order;
        # the header holds "summary", "description" and "parentCommit" when the client sent it
        self.commit_headers: list[tuple[str, str, dict[str, Any]]] = []
        self.user = "fake-user"
        self.orgs = ["chonkie-ai"]
        self._fail_rules: list[_FailRule] = []
        # (repo_id, path) -> bytes served by resolve/ instead of the stored file, at every revision
        self._corrupt: dict[tuple[str, str], bytes] = {}
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()  # releases the requests held by a "hang" rule
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "HubFake":
        if self._server is not None:
            return self
        self._stopping.clear()
        fake = self

        class Handler(_Handler):
            hub = fake

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="hubfake", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:  # close idle keep-alive connections so no handler thread lingers
            conns, self._connections = list(self._connections), set()
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> "HubFake":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def env(self, hf_home: Path) -> dict[str, str]:
        """Environment for a client subprocess: os.environ plus the Hub settings, pointing here."""
        if not self.url:
            raise RuntimeError("HubFake.env() needs a started server")
        env = dict(os.environ)
        for key in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN_PATH",
                    "HUGGING_FACE_HUB_TOKEN", "HF_HUB_CACHE", "HF_DATASETS_CACHE", "HF_XET_CACHE",
                    "HUGGINGFACE_HUB_CACHE", "HF_ASSETS_CACHE"):
            env.pop(key, None)
        env.update(
            HF_ENDPOINT=self.url,
            HF_TOKEN="hf_fake",
            HF_HUB_DISABLE_XET="1",
            HF_HOME=str(hf_home),
            HF_HUB_DISABLE_TELEMETRY="1",
            HF_HUB_OFFLINE="0",
            HF_HUB_DISABLE_PROGRESS_BARS="1",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        return env

    # ------------------------------------------------------------------ failure injection
    def fail_next(self, path_prefix: str, status: int | str = 500, count: int = 1, *,
                  method: str | None = None, message: str | None = None,
                  error_code: str | None = None) -> None:
        """Make the next ``count`` requests whose path starts with ``path_prefix`` fail.

        ``status`` is an HTTP status (answered with an ``{"error": message}`` body and
        ``X-Error-Message``/``X-Error-Code`` headers), ``"drop"`` to close the connection
        without any answer, or ``"hang"`` to keep the connection open and never answer (a Hub
        that stopped answering; released by ``stop``). ``method`` restricts the rule to one
        HTTP method. The failing request has no effect on the store.
        """
        if status not in ("drop", "hang") and not isinstance(status, int):
            raise ValueError("status must be an int, 'drop' or 'hang'")
        with self._lock:
            self._fail_rules.append(_FailRule(path_prefix, status, count, method.upper() if method else None,
                                              message or f"Injected failure {status}", error_code))

    def corrupt(self, repo_id: str, path: str, data: bytes | None = None) -> None:
        """Serve ``data`` (default: the stored bytes with every byte flipped) for ``path`` of
        ``repo_id`` from ``resolve/`` at every revision, with the stored file's headers (ETag,
        X-Linked-Etag): a Hub that answers with wrong content. Tree listings are unchanged.
        ``clear_failures`` forgets it."""
        with self._lock:
            self._corrupt[(repo_id, path)] = data if data is not None else b""

    def clear_failures(self) -> int:
        """Forget the failure rules not used up yet (between tests sharing one fake); return how many."""
        with self._lock:
            n = len(self._fail_rules)
            self._fail_rules.clear()
            self._corrupt.clear()
            return n

    def _take_failure(self, method: str, path: str) -> _FailRule | None:
        with self._lock:
            for rule in self._fail_rules:
                if path.startswith(rule.prefix) and (rule.method is None or rule.method == method):
                    rule.remaining -= 1
                    if rule.remaining <= 0:
                        self._fail_rules.remove(rule)
                    return rule
        return None

    # ------------------------------------------------------------------ store API (test side)
    def create_repo(self, repo_id: str, *, private: bool = False, gitattributes: bool = True) -> Repo:
        with self._lock:
            if repo_id in self.repos:
                return self.repos[repo_id]
            repo = Repo(repo_id=repo_id, private=private)
            self.repos[repo_id] = repo
            if gitattributes:
                self._commit(repo, "main", {".gitattributes": Blob(DEFAULT_GITATTRIBUTES, False)},
                             "initial commit", "")
            return repo

    def add_dataset_from_folder(self, repo_id: str, folder: Path, revision: str = "main") -> str:
        """Commit the files of ``folder`` as the whole tree of branch ``revision``; return the sha."""
        folder = Path(folder)
        files: dict[str, Blob] = {}
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                rel = p.relative_to(folder).as_posix()
                if rel.startswith(".git/") or rel.startswith(".cache/"):
                    continue
                data = p.read_bytes()
                files[rel] = Blob(data, _is_lfs(rel, len(data), data, self.lfs_threshold))
        with self._lock:
            repo = self.repos.get(repo_id) or self.create_repo(repo_id, gitattributes=False)
            return self._commit(repo, revision, files, f"Add files from {folder.name}", "")

    def files(self, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        with self._lock:
            commit = self._resolve(self.repos[repo_id], revision)
            return {path: blob.data for path, blob in commit.files.items()}

    def head(self, repo_id: str, revision: str = "main") -> str:
        """Commit sha a branch (or sha) points at."""
        with self._lock:
            return self._resolve(self.repos[repo_id], revision).sha

    def history(self, repo_id: str, revision: str = "main") -> list[Commit]:
        """First-parent history, newest first."""
        with self._lock:
            repo = self.repos[repo_id]
            out: list[Commit] = []
            commit: Commit | None = self._resolve(repo, revision)
            while commit is not None:
                out.append(commit)
                commit = repo.commits.get(commit.parent) if commit.parent else None
            return out

    # ------------------------------------------------------------------ internals
    def _commit(self, repo: Repo, branch: str, files: dict[str, Blob], title: str, description: str,
                parent: str | None = None) -> str:
        if parent is None:
            parent = repo.refs.get(branch)
        digest = hashlib.sha1()
        digest.update(f"{repo.repo_id}\0{branch}\0{parent}\0{title}\0{time.time_ns()}\0".encode())
        for path in sorted(files):
            digest.update(f"{path}\0{files[path].etag}\0".encode())
        sha = digest.hexdigest()
        repo.commits[sha] = Commit(sha, parent, title, description, _now_iso(), dict(files))
        repo.refs[branch] = sha
        self._mirror(repo, branch)
        return sha

    def _mirror(self, repo: Repo, branch: str) -> None:
        if self.root is None:
            return
        target = self.root / repo.repo_id / quote(branch, safe="")
        if target.exists():
            shutil.rmtree(target)
        for path, blob in repo.commits[repo.refs[branch]].files.items():
            dest = target / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(blob.data)

    def _resolve(self, repo: Repo, revision: str) -> Commit:
        sha = repo.refs.get(revision)
        if sha is None and revision.startswith("refs/heads/"):
            sha = repo.refs.get(revision[len("refs/heads/"):])
        if sha is None and revision in repo.commits:
            sha = revision
        if sha is None:
            raise _HTTPError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return repo.commits[sha]


def _split_repo(hub: HubFake, segments: list[str]) -> tuple[str, list[str]]:
    """Split ``namespace/name/rest...`` into (repo_id, rest). Known repos win; else 2 segments."""
    with hub._lock:
        for n in (2, 1):
            if len(segments) >= n and "/".join(unquote(s) for s in segments[:n]) in hub.repos:
                return "/".join(unquote(s) for s in segments[:n]), segments[n:]
    n = 2 if len(segments) >= 2 else len(segments)
    return "/".join(unquote(s) for s in segments[:n]), segments[n:]


class _Handler(BaseHTTPRequestHandler):
    hub: HubFake
    protocol_version = "HTTP/1.1"
    server_version = "HubFake/0.1"
    timeout = 30  # idle keep-alive connections are closed after this

    def setup(self) -> None:
        super().setup()
        with self.hub._lock:
            self.hub._connections.add(self.connection)

    def finish(self) -> None:
        with self.hub._lock:
            self.hub._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    # quiet default logging; use the "hubfake" logger at debug level instead
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log.debug("%s - %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    # ------------------------------------------------------------------ plumbing
    def _body(self) -> bytes:
        if getattr(self, "_cached_body", None) is not None:
            return self._cached_body
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            body = b"".join(chunks)
        else:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
        self._cached_body = body
        return body

    def _send(self, status: int, body: bytes = b"", content_type: str = "application/json; charset=utf-8",
              headers: dict[str, str] | None = None, head_length: int | None = None) -> None:
        self._log_entry["status"] = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        length = head_length if (self.command == "HEAD" and head_length is not None) else len(body)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def _json(self, obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def _error(self, err: _HTTPError) -> None:
        headers = {"X-Error-Message": err.message, **err.headers}
        if err.error_code:
            headers["X-Error-Code"] = err.error_code
        self._json({"error": err.message, **err.extra}, err.status, headers)

    def _dispatch(self, method: str) -> None:
        self._cached_body = None
        split = urlsplit(self.path)
        path, query = split.path, split.query
        self.query = parse_qs(query, keep_blank_values=True)
        hub = self.hub
        self._log_entry: dict[str, Any] = {"method": method, "path": path, "query": query, "status": None}
        with hub._lock:
            hub.requests.append((method, path))
            hub.request_log.append(self._log_entry)
        rule = hub._take_failure(method, path)
        if rule is not None:
            self._body()  # drain, so the connection state stays sane for a status answer
            if rule.status == "hang":
                hub._stopping.wait()
                self.close_connection = True
                return
            if rule.status == "drop":
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            self._error(_HTTPError(int(rule.status), rule.message, rule.error_code))
            return
        try:
            handled = self._route(method, path)
            if not handled:
                with hub._lock:
                    hub.unknown_requests.append((method, path, query))
                log.warning("hubfake: unhandled %s %s?%s", method, path, query)
                self._body()
                self._error(_HTTPError(404, f"Not implemented by HubFake: {method} {path}"))
        except _HTTPError as err:
            self._body()
            self._error(err)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - a fake answers 500 and logs, like a server would
            log.exception("hubfake: error on %s %s", method, path)
            self._error(_HTTPError(500, f"HubFake internal error: {exc!r}"))

    def _q(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name) or self.query.get(name + "[]")
        return values[-1] if values else default

    def _qbool(self, name: str) -> bool:
        return (self._q(name, "") or "").lower() in ("1", "true", "yes")

    def _repo(self, repo_id: str) -> Repo:
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            raise _HTTPError(404, "Repository not found", "RepoNotFound")
        return repo

    def _resolve(self, repo: Repo, revision: str) -> Commit:
        return self.hub._resolve(repo, revision)

    # ------------------------------------------------------------------ routing
    def _route(self, method: str, path: str) -> bool:
        segments = [s for s in path.split("/") if s != ""]
        hub = self.hub
        if path == "/" and method in ("HEAD", "GET"):  # the home page (mtcb-curate's reachability probe)
            self._send(200, b"" if method == "HEAD" else b"HubFake", "text/plain; charset=utf-8")
            return True
        if path == "/api/whoami-v2" and method == "GET":
            self._whoami()
            return True
        if path == "/api/repos/create" and method == "POST":
            self._create_repo()
            return True
        if path == "/api/repos/delete" and method == "DELETE":
            self._delete_repo()
            return True
        if path == "/api/validate-yaml" and method == "POST":
            self._body()
            self._json({"errors": [], "warnings": []})
            return True
        if segments[:1] == ["__lfs__"]:
            if method == "POST" and segments[1:] == ["verify"]:
                self._lfs_verify()
                return True
            if method == "PUT" and len(segments) == 2:
                self._lfs_put(segments[1])
                return True
            return False
        if segments[:2] == ["api", "datasets"] and len(segments) >= 3:
            repo_id, rest = _split_repo(hub, segments[2:])
            return self._route_api(method, repo_id, rest)
        if segments[:1] == ["datasets"] and len(segments) >= 2:
            # LFS batch: /datasets/{repo}.git/info/lfs/objects/batch
            if method == "POST" and path.endswith(".git/info/lfs/objects/batch"):
                repo_id = unquote(path[len("/datasets/"):-len(".git/info/lfs/objects/batch")])
                self._lfs_batch(repo_id)
                return True
            repo_id, rest = _split_repo(hub, segments[1:])
            if rest[:1] == ["resolve"] and len(rest) >= 3 and method in ("GET", "HEAD"):
                self._resolve_file(repo_id, unquote(rest[1]), "/".join(unquote(s) for s in rest[2:]))
                return True
        return False

    def _route_api(self, method: str, repo_id: str, rest: list[str]) -> bool:
        hub = self.hub
        if not rest and method == "GET":
            self._repo_info(repo_id, "main")
            return True
        if not rest:
            return False
        op, args = rest[0], rest[1:]
        if op == "revision" and args and method == "GET":
            self._repo_info(repo_id, unquote("/".join(args)))
            return True
        if op == "tree" and args and method == "GET":
            self._tree(repo_id, unquote(args[0]), "/".join(unquote(s) for s in args[1:]))
            return True
        if op == "paths-info" and args and method == "POST":
            self._paths_info(repo_id, unquote("/".join(args)))
            return True
        if op == "refs" and not args and method == "GET":
            self._refs(repo_id)
            return True
        if op == "commits" and method == "GET":
            self._commits(repo_id, unquote("/".join(args)) if args else "main")
            return True
        if op == "parquet":
            with hub._lock:
                self._repo(repo_id)
            raise _HTTPError(404, "Parquet conversion not available in HubFake")
        if op == "preupload" and args and method == "POST":
            self._preupload(repo_id, unquote("/".join(args)))
            return True
        if op == "commit" and args and method == "POST":
            self._commit(repo_id, unquote("/".join(args)))
            return True
        if op == "branch" and args and method in ("POST", "DELETE"):
            self._branch(method, repo_id, unquote("/".join(args)))
            return True
        return False

    # ------------------------------------------------------------------ read endpoints
    def _repo_info(self, repo_id: str, revision: str) -> None:
        hub = self.hub
        with hub._lock:
            repo = self._repo(repo_id)
            commit = self._resolve(repo, revision)
            blobs = self._qbool("blobs")
            siblings = []
            for path in sorted(commit.files):
                blob = commit.files[path]
                sib: dict[str, Any] = {"rfilename": path}
                if blobs:
                    sib["size"] = len(blob.data)
                    sib["blobId"] = blob.oid
                    if blob.lfs:
                        sib["lfs"] = {"sha256": blob.sha256, "size": len(blob.data),
                                      "pointerSize": len(blob.pointer)}
                siblings.append(sib)
            readme = commit.files.get("README.md")
            card = _card_data(readme.data if readme else None)
            info = {
                "_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24],
                "id": repo_id,
                "author": repo_id.split("/")[0] if "/" in repo_id else None,
                "sha": commit.sha,
                "lastModified": commit.date,
                "createdAt": repo.created_at,
                "private": repo.private,
                "gated": False,
                "disabled": False,
                "downloads": 0,
                "likes": 0,
                "tags": [],
                "cardData": card,
                "siblings": siblings,
                "usedStorage": sum(len(b.data) for b in commit.files.values()),
            }
        self._json(info)

    def _entry(self, commit: Commit, path: str, expand: bool) -> dict[str, Any]:
        blob = commit.files.get(path)
        if blob is not None:
            entry: dict[str, Any] = {"type": "file", "oid": blob.oid, "size": len(blob.data), "path": path}
            if blob.lfs:
                entry["lfs"] = {"oid": blob.sha256, "size": len(blob.data), "pointerSize": len(blob.pointer)}
        else:
            entry = {"type": "directory", "oid": hashlib.sha1(f"{commit.sha}:{path}".encode()).hexdigest(),
                     "size": 0, "path": path}
        if expand:
            entry["lastCommit"] = {"id": commit.sha, "title": commit.title, "date": commit.date}
            if blob is not None:
                entry["securityFileStatus"] = {"status": "safe", "avScan": {"status": "safe"},
                                               "pickleImportScan": {"status": "unscanned"}}
        return entry

    @staticmethod
    def _dirs(commit: Commit) -> set[str]:
        dirs: set[str] = set()
        for path in commit.files:
            parts = path.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]))
        return dirs

    def _tree(self, repo_id: str, revision: str, base: str) -> None:
        hub = self.hub
        base = base.strip("/")
        with hub._lock:
            repo = self._repo(repo_id)
            commit = self._resolve(repo, revision)
            dirs = self._dirs(commit)
            if base and base not in dirs:
                msg = f"{base} does not exist on \"{revision}\""
                if base in commit.files:
                    msg = f"{base} is a file, not a directory"
                raise _HTTPError(404, msg, "EntryNotFound", {"X-Repo-Commit": commit.sha})
            recursive = self._qbool("recursive")
            expand = self._qbool("expand")
            prefix = base + "/" if base else ""
            entries = []
            for path in sorted(set(commit.files) | dirs):
                if not path.startswith(prefix) or path == base:
                    continue
                if not recursive and "/" in path[len(prefix):]:
                    continue
                entries.append(self._entry(commit, path, expand))
            # directories first, like the Hub
            entries.sort(key=lambda e: (e["type"] != "directory", e["path"]))
        self._json(entries, headers={"X-Repo-Commit": commit.sha})

    def _paths_info(self, repo_id: str, revision: str) -> None:
        body = self._body()
        ctype = (self.headers.get("Content-Type") or "").lower()
        if "json" in ctype:
            data = json.loads(body or b"{}")
            paths = data.get("paths") or []
            expand = bool(data.get("expand"))
        else:
            form = parse_qs(body.decode(), keep_blank_values=True)
            paths = form.get("paths", []) + form.get("paths[]", [])
            expand = (form.get("expand", ["false"])[-1].lower() in ("1", "true"))
        if isinstance(paths, str):
            paths = [paths]
        hub = self.hub
        with hub._lock:
            repo = self._repo(repo_id)
            commit = self._resolve(repo, revision)
            dirs = self._dirs(commit)
            out = [self._entry(commit, p.strip("/"), expand) for p in paths
                   if p.strip("/") in commit.files or p.strip("/") in dirs]
        self._json(out, headers={"X-Repo-Commit": commit.sha})

    def _refs(self, repo_id: str) -> None:
        with self.hub._lock:
            repo = self._repo(repo_id)
            out: dict[str, list] = {"branches": [], "converts": [], "tags": [], "pullRequests": []}
            for name, sha in sorted(repo.refs.items()):
                if name.startswith("refs/convert/"):
                    out["converts"].append({"name": name[len("refs/convert/"):], "ref": name, "targetCommit": sha})
                elif name.startswith("refs/pr/"):
                    out["pullRequests"].append({"name": name[len("refs/pr/"):], "ref": name, "targetCommit": sha})
                else:
                    out["branches"].append({"name": name, "ref": f"refs/heads/{name}", "targetCommit": sha})
        self._json(out)

    def _commits(self, repo_id: str, revision: str) -> None:
        with self.hub._lock:
            self._repo(repo_id)
            history = self.hub.history(repo_id, revision)
            out = [{"id": c.sha, "title": c.title, "message": c.description, "date": c.date,
                    "authors": [{"user": self.hub.user}]} for c in history]
        self._json(out)

    def _resolve_file(self, repo_id: str, revision: str, path: str) -> None:
        with self.hub._lock:
            repo = self._repo(repo_id)
            commit = self._resolve(repo, revision)
            blob = commit.files.get(path)
            bad = self.hub._corrupt.get((repo_id, path))
        if blob is None:
            raise _HTTPError(404, "Entry not found", "EntryNotFound", {"X-Repo-Commit": commit.sha})
        data = blob.data
        if bad is not None:
            data = bad or bytes(b ^ 0xFF for b in blob.data)
        headers = {
            "ETag": f'"{blob.etag}"',
            "X-Repo-Commit": commit.sha,
            "Accept-Ranges": "bytes",
            "Content-Disposition": f'inline; filename="{path.rsplit("/", 1)[-1]}"',
        }
        if blob.lfs:
            headers["X-Linked-Etag"] = f'"{blob.sha256}"'
            headers["X-Linked-Size"] = str(len(data))
        status = 200
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and "," not in rng and data:
            start_s, _, end_s = rng[len("bytes="):].partition("-")
            size = len(data)
            if start_s == "":
                start, end = max(size - int(end_s), 0), size - 1
            else:
                start = int(start_s)
                end = min(int(end_s), size - 1) if end_s else size - 1
            if start >= size and size > 0:
                raise _HTTPError(416, "Requested range not satisfiable", None,
                                 {"Content-Range": f"bytes */{size}"})
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
            data = data[start:end + 1]
        self._send(status, data, "application/octet-stream", headers)

    # ------------------------------------------------------------------ write endpoints
    def _whoami(self) -> None:
        hub = self.hub
        self._json({
            "type": "user", "id": hashlib.sha1(hub.user.encode()).hexdigest()[:24], "name": hub.user,
            "fullname": "Fake User", "email": f"{hub.user}@example.invalid", "emailVerified": True,
            "canPay": False, "isPro": False, "periodEnd": None,
            "orgs": [{"type": "org", "name": org, "fullname": org, "roleInOrg": "admin"} for org in hub.orgs],
            "auth": {"type": "access_token",
                     "accessToken": {"displayName": "hubfake", "role": "write", "createdAt": _now_iso()}},
        })

    def _create_repo(self) -> None:
        payload = json.loads(self._body() or b"{}")
        repo_type = payload.get("type") or "model"
        if repo_type != "dataset":
            raise _HTTPError(400, f"HubFake only serves dataset repos, not {repo_type!r}")
        name = payload.get("name")
        org = payload.get("organization") or self.hub.user
        repo_id = f"{org}/{name}"
        hub = self.hub
        with hub._lock:
            if repo_id in hub.repos:
                # like the Hub, the 409 body carries the url: create_repo(exist_ok=True) reads it
                raise _HTTPError(409, "You already created this dataset repo",
                                 extra={"url": f"{hub.url}/datasets/{repo_id}"})
            private = bool(payload.get("private")) or payload.get("visibility") == "private"
            hub.create_repo(repo_id, private=private)
        self._json({"url": f"{hub.url}/datasets/{repo_id}", "name": repo_id, "id": repo_id})

    def _delete_repo(self) -> None:
        payload = json.loads(self._body() or b"{}")
        name, org = payload.get("name"), payload.get("organization") or self.hub.user
        repo_id = f"{org}/{name}"
        with self.hub._lock:
            self._repo(repo_id)
            del self.hub.repos[repo_id]
        self._json({})

    def _branch(self, method: str, repo_id: str, branch: str) -> None:
        payload = json.loads(self._body() or b"{}") if method == "POST" else {}
        with self.hub._lock:
            repo = self._repo(repo_id)
            if method == "DELETE":
                if branch not in repo.refs or branch == "main":
                    raise _HTTPError(404 if branch not in repo.refs else 403, f"Cannot delete branch {branch}")
                del repo.refs[branch]
            else:
                if branch in repo.refs:
                    raise _HTTPError(409, f"Reference already exists: {branch}")
                start = payload.get("startingPoint") or "main"
                repo.refs[branch] = self._resolve(repo, start).sha
                self.hub._mirror(repo, branch)
        self._json({})

    def _preupload(self, repo_id: str, revision: str) -> None:
        payload = json.loads(self._body() or b"{}")
        hub = self.hub
        with hub._lock:
            repo = self._repo(repo_id)
            commit = self._resolve(repo, revision)
            files = []
            for item in payload.get("files", []):
                path, size = item["path"], int(item.get("size") or 0)
                sample = base64.b64decode(item.get("sample") or "")
                lfs = _is_lfs(path, size, sample, hub.lfs_threshold)
                existing = commit.files.get(path)
                oid = None
                if existing is not None:
                    oid = existing.sha256 if existing.lfs else git_blob_sha1(existing.data)
                files.append({"path": path, "uploadMode": "lfs" if lfs else "regular",
                              "shouldIgnore": False, "oid": oid})
        self._json({"files": files, "commitOid": commit.sha})

    def _lfs_batch(self, repo_id: str) -> None:
        payload = json.loads(self._body() or b"{}")
        hub = self.hub
        with hub._lock:
            self._repo(repo_id)
            if payload.get("operation", "upload") != "upload":
                raise _HTTPError(422, "HubFake LFS batch only supports upload")
            objects = []
            for obj in payload.get("objects", []):
                oid, size = obj["oid"], int(obj["size"])
                entry: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
                if oid not in hub.lfs_objects:
                    entry["actions"] = {
                        "upload": {"href": f"{hub.url}/__lfs__/{oid}", "header": {}},
                        "verify": {"href": f"{hub.url}/__lfs__/verify", "header": {}},
                    }
                objects.append(entry)
        self._send(200, json.dumps({"transfer": "basic", "objects": objects, "hash_algo": "sha256"}).encode(),
                   "application/vnd.git-lfs+json")

    def _lfs_put(self, oid: str) -> None:
        data = self._body()
        if hashlib.sha256(data).hexdigest() != oid:
            raise _HTTPError(400, "Uploaded content does not match its sha256 oid")
        with self.hub._lock:
            self.hub.lfs_objects[oid] = data
        self._send(200, b"", "text/plain", headers={"ETag": f'"{hashlib.md5(data).hexdigest()}"'})

    def _lfs_verify(self) -> None:
        payload = json.loads(self._body() or b"{}")
        with self.hub._lock:
            data = self.hub.lfs_objects.get(payload.get("oid", ""))
        if data is None or len(data) != int(payload.get("size", -1)):
            raise _HTTPError(404, "LFS object not found or wrong size")
        self._json({"success": True})

    def _commit(self, repo_id: str, revision: str) -> None:
        body = self._body()
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        hub = self.hub
        create_pr = self._qbool("create_pr")
        with hub._lock:
            repo = self._repo(repo_id)
            base = self._resolve(repo, revision)
            if revision not in repo.refs and not create_pr:
                raise _HTTPError(400, f"Cannot commit to {revision}: not a branch", "RevisionNotFound")
            header = next((item["value"] for item in lines if item.get("key") == "header"), None)
            if header is None:
                raise _HTTPError(400, "Missing commit header")
            hub.commit_headers.append((repo_id, revision, dict(header)))
            parent = header.get("parentCommit")
            if parent is not None and parent != base.sha:
                raise _HTTPError(412, "A commit has happened since. Please refresh and try again.")
            files = dict(base.files)
            for item in lines:
                key, value = item.get("key"), item.get("value") or {}
                path = value.get("path", "")
                if key == "file":
                    if value.get("encoding", "base64") != "base64":
                        raise _HTTPError(400, "HubFake only accepts base64 file content")
                    data = base64.b64decode(value["content"])
                    files[path] = Blob(data, False)
                elif key == "lfsFile":
                    data = hub.lfs_objects.get(value["oid"])
                    if data is None:  # copy of an LFS file already in a commit of this fake
                        data = next((b.data for r in hub.repos.values() for c in r.commits.values()
                                     for b in c.files.values() if b.lfs and b.sha256 == value["oid"]), None)
                    if data is None:
                        raise _HTTPError(422, f"LFS object {value['oid']} of {path} was never uploaded")
                    if "size" in value and int(value["size"]) != len(data):
                        raise _HTTPError(422, f"LFS object size mismatch for {path}")
                    files[path] = Blob(data, True)
                elif key == "deletedFile":
                    if path not in files:
                        raise _HTTPError(404, "A file with this name doesn't exist", "EntryNotFound")
                    del files[path]
                elif key == "deletedFolder":
                    prefix = path.rstrip("/") + "/"
                    doomed = [p for p in files if p.startswith(prefix)]
                    if not doomed:
                        raise _HTTPError(404, "A folder with this name doesn't exist", "EntryNotFound")
                    for p in doomed:
                        del files[p]
                elif key != "header":
                    raise _HTTPError(400, f"HubFake does not support commit operation {key!r}")
            pr_url = None
            if create_pr:
                repo.pr_count += 1
                branch = f"refs/pr/{repo.pr_count}"
                pr_url = f"{hub.url}/datasets/{repo_id}/discussions/{repo.pr_count}"
            else:
                branch = revision
            sha = hub._commit(repo, branch, files, header.get("summary") or "", header.get("description") or "",
                              parent=base.sha)
        self._json({"success": True, "commitOid": sha, "commitUrl": f"{hub.url}/datasets/{repo_id}/commit/{sha}",
                    "hookOutput": "", "pullRequestUrl": pr_url})


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - a manual tool
    """Run the fake as a standalone server until interrupted (for trying the CLI by hand).

    ``python tests/hubfake.py [--port N] [--fail PREFIX:STATUS[:COUNT[:METHOD]]]...`` prints
    the environment to export (``HF_ENDPOINT`` and the rest of :meth:`HubFake.env`'s settings)
    and then serves until killed. Each ``--fail`` is a :meth:`HubFake.fail_next` rule;
    ``--corrupt REPO:PATH`` serves other bytes for that file at every revision; ``--verbose``
    prints every request line and status.
    """
    import argparse
    import signal
    import tempfile

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fail", action="append", default=[], metavar="PREFIX:STATUS[:COUNT[:METHOD]]")
    parser.add_argument("--corrupt", action="append", default=[], metavar="REPO:PATH")
    parser.add_argument("--verbose", action="store_true", help="print every request and its status")
    args = parser.parse_args(argv)
    if args.verbose:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("hubfake: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.DEBUG)
    hub = HubFake(port=args.port).start()
    for rule in args.fail:
        prefix, status, *rest = rule.split(":")
        hub.fail_next(prefix, status if status == "drop" else int(status), int(rest[0]) if rest else 1,
                      method=rest[1] if len(rest) > 1 else None)
    for item in args.corrupt:
        repo_id, path = item.split(":", 1)
        hub.corrupt(repo_id, path)
    env = hub.env(Path(tempfile.mkdtemp(prefix="hubfake-home-")))
    for key in ("HF_ENDPOINT", "HF_HUB_DISABLE_XET", "HF_HOME", "HF_HUB_DISABLE_TELEMETRY", "HF_HUB_OFFLINE"):
        print(f"export {key}={env[key]}", flush=True)
    print("export HF_TOKEN=<any non-empty value>", flush=True)
    def _stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        hub.stop()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
