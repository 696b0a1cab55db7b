"""Fetching a source from where it lives: a web page, a GitHub file at a commit, an arXiv paper.

``source add PROTOCOL URL`` reads the URL here and pins the bytes exactly as a local file is
pinned (:mod:`.snapshots`). The read is bounded: at most :data:`MAX_SNAPSHOT_BYTES` of body
(after gzip is undone, so a small compressed bomb is refused too), a time limit on the whole
exchange, and at most :data:`MAX_REDIRECTS` redirects; the final URL after redirects is
recorded, with the retrieval time and the server's ``ETag`` and ``Last-Modified``.

What a reviewer pastes is resolved to what they mean:

* ``https://github.com/OWNER/REPO/blob/BRANCH/PATH``: the branch is resolved to its current
  commit through the GitHub API (``repos/OWNER/REPO/commits/BRANCH``), and the file's raw
  bytes are read at that commit; the commit and the file's permalink are recorded.
* ``https://arxiv.org/abs/ID`` (or ``IDvN``): the PDF of that version (without a version, the
  latest one, found on the abstract page), recorded as ``arXiv:IDvN``.

The hosts' base URLs come from the environment (``PROTOCODER_GITHUB_API``,
``PROTOCODER_GITHUB_RAW``, ``PROTOCODER_ARXIV``): a mirror or a proxy, and the tests' local
servers. httpx is imported only when something is fetched.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit

from ..errors import InvalidInput, Problem
from ..storage.formats import url_problem
from .extract import MAX_SNAPSHOT_BYTES

if TYPE_CHECKING:
    import httpx

MAX_REDIRECTS = 10
DEFAULT_TIMEOUT = 60.0
"""Seconds the whole exchange (connecting, redirects, the body) may take."""

_CONTENT_NAMES = {"application/pdf": "document.pdf", "text/html": "index.html", "application/xhtml+xml": "index.html",
                  "text/markdown": "document.md", "text/x-markdown": "document.md", "text/plain": "document.txt"}
"""A file name to read the body as, from the server's media type, when the URL's path has none."""

_GITHUB_BLOB = re.compile(r"^/(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+)/blob/(?P<ref>[^/]+)/(?P<path>.+)$")
_ARXIV_ABS = re.compile(r"^/(?:abs|pdf)/(?P<id>(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7}))(?:v(?P<v>\d+))?"
                        r"(?:\.pdf)?/?$")
_FULL_COMMIT = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


@dataclass(frozen=True)
class Hosts:
    """Base URLs of the services a URL is resolved through (overridable for mirrors and tests)."""

    github_api: str = "https://api.github.com"
    github_raw: str = "https://raw.githubusercontent.com"
    arxiv: str = "https://arxiv.org"

    @classmethod
    def from_environment(cls) -> Hosts:
        """The defaults, each replaced by its environment variable when set."""
        base = cls()
        return cls(*(os.environ.get(name, "").strip().rstrip("/") or default for name, default in (
            ("PROTOCODER_GITHUB_API", base.github_api), ("PROTOCODER_GITHUB_RAW", base.github_raw),
            ("PROTOCODER_ARXIV", base.arxiv))))


@dataclass(frozen=True)
class Limits:
    """How much a fetch may read and how long it may take."""

    max_bytes: int = MAX_SNAPSHOT_BYTES
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def from_environment(cls) -> Limits:
        """The defaults, lowered by ``PROTOCODER_FETCH_MAX_BYTES`` / ``PROTOCODER_FETCH_TIMEOUT`` (seconds)."""
        limits = cls()
        max_bytes, timeout = limits.max_bytes, limits.timeout
        for name in ("PROTOCODER_FETCH_MAX_BYTES", "PROTOCODER_FETCH_TIMEOUT"):
            text = os.environ.get(name, "").strip()
            if not text:
                continue
            try:
                value = float(text) if name.endswith("TIMEOUT") else int(text)
            except ValueError:
                value = 0
            if not value > 0:
                kind = "seconds" if name.endswith("TIMEOUT") else "bytes"
                raise InvalidInput([Problem(name, 0, 0, f"expected a positive number of {kind}, found {text!r}")])
            if name.endswith("TIMEOUT"):
                timeout = float(value)
            else:
                max_bytes = min(max_bytes, int(value))  # lowers the limit, never raises it
        return cls(max_bytes, timeout)


@dataclass(frozen=True)
class Fetched:
    """What was read from a URL, and what to record about it."""

    url: str
    """The URL as the reviewer gave it."""
    data: bytes
    final_url: str
    """Where the bytes came from, after resolving (GitHub, arXiv) and redirects."""
    retrieved_at: str
    name: str
    """A file name whose extension says how to read the body (from the URL's path or the media type)."""
    etag: str = ""
    last_modified: str = ""
    version: str = ""
    """The version the URL named (``arXiv:2401.01234v2``, a commit), or ''."""
    title: str = ""
    repository: str = ""
    rev: str = ""
    commit: str = ""
    path: str = ""
    permalink: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def stem(self) -> str:
        """The file name without its extension: a title when the document has none of its own."""
        return PurePosixPath(self.path or self.name).stem

    def __str__(self) -> str:
        return self.url or self.permalink or self.path

    def source_fields(self) -> dict[str, str]:
        """The :class:`~protocoder.model.Source` fields this fetch records."""
        return {"final_url": self.final_url, "retrieved_at": self.retrieved_at, "etag": self.etag,
                "last_modified": self.last_modified, "repository": self.repository, "rev": self.rev,
                "commit": self.commit, "path": self.path, "permalink": self.permalink}


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _refuse(url: str, why: str) -> InvalidInput:
    return InvalidInput([Problem(url, 0, 0, why)])


def is_url(text: str) -> bool:
    """True when ``text`` is meant as a web address rather than a file path."""
    return text.strip().lower().startswith(("http://", "https://"))


class _NotModified(Exception):
    """The server answered 304: what was pinned is what it serves."""


def fetch_if_changed(url: str, etag: str, last_modified: str, *, hosts: Hosts | None = None,
                     limits: Limits | None = None) -> Fetched | None:
    """Like :func:`fetch`, but None when the server says (304 Not Modified) that the document with
    this ``ETag`` / ``Last-Modified`` is still what it serves; its body is then not sent again."""
    validators = {"If-None-Match": etag} if etag else {}
    if last_modified:
        validators["If-Modified-Since"] = last_modified
    try:
        return fetch(url, hosts=hosts, limits=limits, validators=validators)
    except _NotModified:
        return None


def fetch(url: str, *, hosts: Hosts | None = None, limits: Limits | None = None,
          validators: dict[str, str] | None = None) -> Fetched:
    """Read ``url`` (resolving a GitHub file or an arXiv abstract first) within the limits.

    Raises :class:`InvalidInput` naming the URL and why in one line: not reachable, an error
    status, too large, too slow, too many redirects, a body that cannot be decoded.
    ``validators`` (conditional request headers) apply to a plain URL only.
    """
    url = url.strip()
    if problem := url_problem(url):
        raise InvalidInput([Problem(url, 0, 0, problem.replace(f"URL {url!r} ", ""))])
    hosts = hosts or Hosts.from_environment()
    limits = limits or Limits.from_environment()
    import httpx

    deadline = time.monotonic() + limits.timeout
    with httpx.Client(follow_redirects=True, max_redirects=MAX_REDIRECTS, timeout=limits.timeout,
                      headers={"User-Agent": "protocoder (source add)"}) as client:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        blob = _GITHUB_BLOB.match(parts.path) if host in ("github.com", "www.github.com") else None
        if blob is not None:
            return _github_file(client, url, blob, hosts, limits, deadline)
        arxiv = _ARXIV_ABS.match(parts.path) if host in ("arxiv.org", "www.arxiv.org", "export.arxiv.org") else None
        if arxiv is not None:
            return _arxiv_paper(client, url, arxiv.group("id"), arxiv.group("v"), hosts, limits, deadline)
        return _plain(client, url, url, limits, deadline, headers=validators)


def _plain(client: httpx.Client, url: str, target: str, limits: Limits, deadline: float, *,
           name: str = "", headers: dict[str, str] | None = None) -> Fetched:
    """Read ``target`` (what ``url`` resolved to) as a document."""
    response, data = _get(client, target, url, limits, deadline, headers=headers or None)
    if response.status_code == 304 and headers:
        raise _NotModified()
    final = str(response.url)
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if b"\0" in data[:8192] and not data.startswith(b"%PDF-"):
        # A text name (or a text media type) does not make NUL bytes a document.
        raise _refuse(url, f"binary content ({media or 'no media type'}), not a document protocoder can read "
                           "(expected PDF, HTML, Markdown or plain text)")
    return Fetched(url, data, final, _now(), name or _file_name(final, media), response.headers.get("etag", ""),
                   response.headers.get("last-modified", ""))


def _file_name(final_url: str, media: str) -> str:
    """The name to sniff the body by: the URL path's own when it has an extension we know the
    meaning of, else one made from the server's media type, else the path's last segment."""
    last = PurePosixPath(unquote(urlsplit(final_url).path)).name
    suffix = PurePosixPath(last).suffix.lower()
    if suffix in (".pdf", ".html", ".htm", ".xhtml", ".md", ".markdown", ".txt", ".text"):
        return last
    if media in _CONTENT_NAMES and (not suffix or media != "text/plain"):
        return _CONTENT_NAMES[media]
    return last or "document"


def _get(client: httpx.Client, target: str, shown: str, limits: Limits, deadline: float,
         headers: dict[str, str] | None = None) -> tuple[httpx.Response, bytes]:
    """The response and body of ``target``, read within the limits (errors name ``shown``)."""
    import httpx

    where = shown if target == shown else f"{shown} (read from {target})"
    try:
        with client.stream("GET", target, headers=headers,
                           timeout=httpx.Timeout(max(0.1, deadline - time.monotonic()))) as response:
            if response.status_code >= 400:
                reason = f" {response.reason_phrase}" if response.reason_phrase else ""
                raise _refuse(where, f"the server answered {response.status_code}{reason}")
            declared = response.headers.get("content-length", "")
            encoded = response.headers.get("content-encoding", "identity").lower() not in ("", "identity")
            if declared.isdigit() and not encoded and int(declared) > limits.max_bytes:
                raise _refuse(where, f"the body is {int(declared):,} bytes; a source may have at most "
                                     f"{limits.max_bytes:,}")
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limits.max_bytes:
                    raise _refuse(where, f"the body is over {limits.max_bytes:,} bytes, the most a source may have")
                if time.monotonic() > deadline:
                    raise _refuse(where, f"no complete answer within {limits.timeout:g} seconds")
                chunks.append(chunk)
            return response, b"".join(chunks)
    except httpx.TimeoutException:
        raise _refuse(where, f"no complete answer within {limits.timeout:g} seconds") from None
    except httpx.TooManyRedirects:
        raise _refuse(where, f"more than {MAX_REDIRECTS} redirects") from None
    except httpx.DecodingError as exc:
        raise _refuse(where, f"the body cannot be decoded ({_first_line(exc)})") from None
    except httpx.UnsupportedProtocol as exc:
        raise _refuse(where, f"redirected to an address that is not http(s) ({_first_line(exc)})") from None
    except (httpx.TransportError, httpx.InvalidURL) as exc:
        raise _refuse(where, f"cannot be reached ({_first_line(exc) or type(exc).__name__})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


# --------------------------------------------------------------------------- GitHub


def github_permalink(owner: str, repo: str, commit: str, path: str) -> str:
    """The GitHub page of ``path`` at ``commit``."""
    return f"https://github.com/{owner}/{repo}/blob/{commit}/{quote(path)}"


def github_commit(client: httpx.Client, owner: str, repo: str, ref: str, hosts: Hosts, limits: Limits,
                  deadline: float, shown: str) -> str:
    """The full commit id ``ref`` (a branch, a tag, a commit) of a GitHub repository is at now."""
    if _FULL_COMMIT.match(ref):
        return ref
    api = f"{hosts.github_api}/repos/{owner}/{repo}/commits/{quote(ref, safe='')}"
    _, body = _get(client, api, shown, Limits(min(limits.max_bytes, 16 << 20), limits.timeout), deadline,
                   headers={"Accept": "application/vnd.github.sha"})
    text = body.decode("utf-8", "replace").strip()
    if not _FULL_COMMIT.match(text):
        import json

        try:
            text = str(json.loads(text).get("sha", ""))
        except (ValueError, AttributeError):
            text = ""
    if not _FULL_COMMIT.match(text):
        raise _refuse(shown, f"the GitHub API did not give a commit id for {ref!r} ({api})")
    return text


def _github_file(client: httpx.Client, url: str, blob: re.Match[str], hosts: Hosts, limits: Limits,
                 deadline: float) -> Fetched:
    owner, repo, ref = blob.group("owner"), blob.group("repo"), unquote(blob.group("ref"))
    path = unquote(blob.group("path"))
    commit = github_commit(client, owner, repo, ref, hosts, limits, deadline, url)
    raw = f"{hosts.github_raw}/{owner}/{repo}/{commit}/{quote(path)}"
    fetched = _plain(client, url, raw, limits, deadline, name=PurePosixPath(path).name)
    return Fetched(url, fetched.data, fetched.final_url, fetched.retrieved_at, fetched.name, fetched.etag,
                   fetched.last_modified, version=f"commit {commit[:12]}", title="",
                   repository=f"https://github.com/{owner}/{repo}", rev=ref, commit=commit, path=path,
                   permalink=github_permalink(owner, repo, commit, path))


# --------------------------------------------------------------------------- arXiv


def _arxiv_paper(client: httpx.Client, url: str, paper: str, version: str | None, hosts: Hosts, limits: Limits,
                 deadline: float) -> Fetched:
    if version is None:
        version = arxiv_latest(client, url, paper, hosts, limits, deadline)
    pdf = f"{hosts.arxiv}/pdf/{paper}v{version}"
    fetched = _plain(client, url, pdf, limits, deadline, name="paper.pdf")
    return Fetched(url, fetched.data, fetched.final_url, fetched.retrieved_at, "paper.pdf", fetched.etag,
                   fetched.last_modified, version=f"arXiv:{paper}v{version}")


def arxiv_latest(client: httpx.Client, url: str, paper: str, hosts: Hosts, limits: Limits,
                 deadline: float) -> str:
    """The latest version number of an arXiv paper, read from its abstract page (its submission history)."""
    page = f"{hosts.arxiv}/abs/{paper}"
    _, body = _get(client, page, url, Limits(min(limits.max_bytes, 8 << 20), limits.timeout), deadline)
    versions = [int(v) for v in re.findall(rf"{re.escape(paper)}v(\d+)\b", body.decode("utf-8", "replace"))]
    versions += [int(v) for v in re.findall(r"\[v(\d+)\]", body.decode("utf-8", "replace"))]
    if not versions:
        raise _refuse(url, f"the abstract page ({page}) names no version of {paper}")
    return str(max(versions))


def current_commit(url: str, *, hosts: Hosts | None = None, limits: Limits | None = None) -> str | None:
    """For a GitHub file URL: the commit its branch is at now (None for any other URL)."""
    parts = urlsplit(url.strip())
    blob = _GITHUB_BLOB.match(parts.path) if (parts.hostname or "").lower() in ("github.com", "www.github.com") \
        else None
    if blob is None:
        return None
    hosts = hosts or Hosts.from_environment()
    limits = limits or Limits.from_environment()
    import httpx

    with httpx.Client(follow_redirects=True, max_redirects=MAX_REDIRECTS, timeout=limits.timeout) as client:
        return github_commit(client, blob.group("owner"), blob.group("repo"), unquote(blob.group("ref")), hosts,
                             limits, time.monotonic() + limits.timeout, url)
