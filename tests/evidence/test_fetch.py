"""``source add PROTOCOL URL``, ``source check`` and ``source update`` of URL sources, against a
real HTTP server on 127.0.0.1 (:mod:`.webserver`): redirects, error statuses, a slow and a
trickling answer, bodies over the limit, binary where a document was expected, gzip, and
fake GitHub (API and raw files) and arXiv hosts. Nothing here reaches the internet.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result
from test_schemas import errors_of

from .docs import make_pdf
from .webserver import LocalServer, answer, chunks, redirect, serve
from conftest import tree_digest

PAGE = b"""<!DOCTYPE html>
<html><head><title>Harness guide</title></head><body>
<h1>Harness guide</h1>
<p>The harness starts a fresh container for every task and deletes it after grading.</p>
<p>Agents get thirty minutes of wall-clock time per task.</p>
</body></html>
"""
PAGE_V2 = PAGE.replace(b"thirty minutes", b"one hour")
CODE = b"""import docker


def run(task):
    client = docker.from_env()
    container = client.containers.run(task.image, detach=True, auto_remove=True)
    env.reset()
    return container
"""
COMMIT = "a" * 40
COMMIT2 = "b" * 40


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def web(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalServer]:
    """The local server, with GitHub's and arXiv's base URLs pointing at it and small limits."""
    with serve(LocalServer()) as server:
        monkeypatch.setenv("PROTOCODER_GITHUB_API", server.url("/api"))
        monkeypatch.setenv("PROTOCODER_GITHUB_RAW", server.url("/raw"))
        monkeypatch.setenv("PROTOCODER_ARXIV", server.url("/arxiv"))
        monkeypatch.setenv("PROTOCODER_FETCH_TIMEOUT", "1.5")
        monkeypatch.setenv("PROTOCODER_FETCH_MAX_BYTES", "200000")
        yield server


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result


def sources_of(root: Path, protocol: str = "swe-bench") -> list[dict]:
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load((root / "protocols" / protocol / "protocol.yaml").read_text(encoding="utf-8"))
    return list(data.get("sources") or [])


def snapshot_bytes(root: Path, source: dict) -> bytes:
    suffix = {"text/html": "html", "text/markdown": "md", "text/plain": "txt", "application/pdf": "pdf"}
    return (root / "sources" / f"{source['sha256']}.{suffix[source['media_type']]}").read_bytes()


def test_a_url_is_pinned_after_its_redirects_with_what_the_server_said(
        bundled: Path, cli: Callable[..., Result], web: LocalServer) -> None:
    web.routes["/start"] = redirect("/hop")
    web.routes["/hop"] = redirect(web.url("/docs/guide.html"), 301)
    web.routes["/docs/guide.html"] = answer(200, PAGE, headers={"ETag": '"v1"',
                                                                 "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"})
    before = len(sources_of(bundled))
    out = ok(cli("source", "add", "swe-bench", web.url("/start"), "--workspace", bundled))
    assert "Pinned source harness-guide for swe-bench" in out.stdout
    assert f"read from {web.url('/docs/guide.html')} at " in out.stdout
    sources = sources_of(bundled)
    assert len(sources) == before + 1
    pinned = sources[-1]
    assert pinned["url"] == web.url("/start")
    assert pinned["final_url"] == web.url("/docs/guide.html")
    assert pinned["etag"] == '"v1"'
    assert pinned["last_modified"] == "Tue, 01 Dec 2026 10:00:00 GMT"
    assert str(pinned["retrieved_at"]).startswith("20")
    assert pinned["media_type"] == "text/html"
    # The bytes kept are exactly the bytes served, addressed by their hash, as a local file's are.
    assert snapshot_bytes(bundled, pinned) == PAGE
    assert pinned["sha256"] == hashlib.sha256(PAGE).hexdigest()
    ok(cli("validate", "--workspace", bundled))
    out = ok(cli("quote", "add", "--cell", "swe-bench/reset_retention", "--reviewer", "casheekar", "--source",
                 "harness-guide", "starts a fresh container for every task", "--workspace", bundled))
    assert out.stdout.startswith("Quoted harness-guide")


def test_gzip_is_undone_and_the_document_bytes_are_kept(bundled: Path, cli: Callable[..., Result],
                                                        web: LocalServer) -> None:
    text = b"# Rules\n\nEvery attempt starts from a clean checkout of the repository.\n"
    web.routes["/rules"] = answer(200, gzip.compress(text), "text/markdown; charset=utf-8",
                                  headers={"Content-Encoding": "gzip"})
    ok(cli("source", "add", "swe-bench", web.url("/rules"), "--id", "rules", "--workspace", bundled))
    pinned = sources_of(bundled)[-1]
    assert pinned["media_type"] == "text/markdown"  # from the server's media type: the path has no extension
    assert snapshot_bytes(bundled, pinned) == text


def _bomb() -> bytes:
    return gzip.compress(b" " * 5_000_000)


BAD = {
    # route, what the one line must say
    "/missing": (answer(404, b"nothing here", "text/plain"), "answered 404"),
    "/broken": (answer(500, b"oops", "text/plain"), "answered 500"),
    "/loop": (redirect("/loop"), "more than 10 redirects"),
    "/slow": (lambda h: (__import__("time").sleep(4), answer(200, PAGE)(h)), "no complete answer within 1.5 seconds"),
    "/trickle": (chunks([b"x" * 10] * 40, delay=0.1), "no complete answer within 1.5 seconds"),
    "/huge": (chunks(iter([b"y" * 65536] * 20)), "over 200,000 bytes"),
    "/huge-declared": (answer(200, b"z" * 300000, "text/plain"), "300,000 bytes"),
    "/bomb": (answer(200, _bomb(), "text/plain", headers={"Content-Encoding": "gzip"}), "over 200,000 bytes"),
    "/bad-gzip": (answer(200, b"not gzip at all", "text/plain", headers={"Content-Encoding": "gzip"}),
                  "cannot be decoded"),
    "/logo.png": (answer(200, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(200), "image/png"), "not a document"),
    "/notes": (answer(200, b"text\0with\0nul bytes" + bytes(100), "text/plain"), "not a document"),
    "/paper.pdf": (answer(200, b"<html>sign in</html>", "application/pdf"), "not a PDF"),
}


@pytest.mark.parametrize("path", list(BAD))
def test_bad_answers_are_refused_in_one_line_and_nothing_is_written(
        bundled: Path, cli: Callable[..., Result], web: LocalServer, path: str) -> None:
    route, why = BAD[path]
    web.routes[path] = route
    before = tree_digest(bundled)
    result = cli("source", "add", "swe-bench", web.url(path), "--workspace", bundled)
    assert result.exit_code == 1, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert web.url(path) in message and why in message, message
    assert "Traceback" not in result.output
    assert tree_digest(bundled) == before


def test_an_unreachable_host_is_refused(bundled: Path, cli: Callable[..., Result]) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    before = tree_digest(bundled)
    result = cli("source", "add", "swe-bench", f"http://127.0.0.1:{port}/x", "--workspace", bundled)
    assert result.exit_code == 1
    assert f"http://127.0.0.1:{port}/x: cannot be reached" in result.stderr
    assert tree_digest(bundled) == before


def test_a_wrong_protocol_is_refused_before_anything_is_fetched(bundled: Path, cli: Callable[..., Result],
                                                                web: LocalServer) -> None:
    web.routes["/page"] = answer(200, PAGE)
    result = cli("source", "add", "no-such-protocol", web.url("/page"), "--workspace", bundled)
    assert result.exit_code == 1 and "no protocol 'no-such-protocol'" in result.stderr
    assert web.hits == []


def _github(web: LocalServer, commit: str, body: bytes) -> None:
    web.routes["/api/repos/octo/harness/commits/main"] = answer(200, commit.encode(), "application/vnd.github.sha")
    web.routes[f"/raw/octo/harness/{commit}/agent/run.py"] = answer(200, body, "text/plain; charset=utf-8")


def test_a_github_file_url_is_read_at_its_branch_commit(bundled: Path, cli: Callable[..., Result],
                                                        web: LocalServer) -> None:
    _github(web, COMMIT, CODE)
    url = "https://github.com/octo/harness/blob/main/agent/run.py"
    out = ok(cli("source", "add", "swe-bench", url, "--workspace", bundled))
    assert f"commit {COMMIT}" in out.stdout
    pinned = sources_of(bundled)[-1]
    assert pinned["url"] == url
    assert pinned["final_url"] == web.url(f"/raw/octo/harness/{COMMIT}/agent/run.py")
    assert (pinned["repository"], pinned["rev"], pinned["commit"], pinned["path"]) == (
        "https://github.com/octo/harness", "main", COMMIT, "agent/run.py")
    assert pinned["permalink"] == f"https://github.com/octo/harness/blob/{COMMIT}/agent/run.py"
    assert pinned["version"] == f"commit {COMMIT[:12]}"
    assert pinned["media_type"] == "text/plain"
    assert snapshot_bytes(bundled, pinned) == CODE
    assert web.hits[0] == "/api/repos/octo/harness/commits/main"
    ok(cli("validate", "--workspace", bundled))
    assert errors_of(bundled) == []


def test_a_github_branch_that_does_not_exist_is_refused(bundled: Path, cli: Callable[..., Result],
                                                        web: LocalServer) -> None:
    before = tree_digest(bundled)
    result = cli("source", "add", "swe-bench", "https://github.com/octo/harness/blob/nope/run.py",
                 "--workspace", bundled)
    assert result.exit_code == 1
    assert "https://github.com/octo/harness/blob/nope/run.py (read from " in result.stderr
    assert "answered 404" in result.stderr
    assert tree_digest(bundled) == before


def _arxiv(web: LocalServer) -> dict[str, bytes]:
    papers = {version: make_pdf([[f"Version {version} of the paper.", "Each episode ends after fifty steps."]],
                                title="A benchmark") for version in ("1", "2")}
    web.routes["/arxiv/abs/2401.01234"] = answer(200, b"<html><body>Submission history: [v1] Mon, [v2] Tue "
                                                      b"<a href='/pdf/2401.01234v2'>PDF</a></body></html>")
    for version, pdf in papers.items():
        web.routes[f"/arxiv/pdf/2401.01234v{version}"] = answer(200, pdf, "application/pdf")
    return papers


def test_an_arxiv_abstract_url_is_read_as_the_pdf_of_its_latest_version(
        bundled: Path, cli: Callable[..., Result], web: LocalServer) -> None:
    papers = _arxiv(web)
    ok(cli("source", "add", "swe-bench", "https://arxiv.org/abs/2401.01234", "--id", "paper", "--workspace", bundled))
    pinned = sources_of(bundled)[-1]
    assert pinned["version"] == "arXiv:2401.01234v2"
    assert pinned["media_type"] == "application/pdf"
    assert pinned["final_url"] == web.url("/arxiv/pdf/2401.01234v2")
    assert snapshot_bytes(bundled, pinned) == papers["2"]


def test_an_arxiv_url_with_a_version_reads_that_version(bundled: Path, cli: Callable[..., Result],
                                                        web: LocalServer) -> None:
    papers = _arxiv(web)
    ok(cli("source", "add", "swe-bench", "https://arxiv.org/abs/2401.01234v1", "--id", "paper",
           "--workspace", bundled))
    pinned = sources_of(bundled)[-1]
    assert pinned["version"] == "arXiv:2401.01234v1"
    assert snapshot_bytes(bundled, pinned) == papers["1"]
    assert "/arxiv/abs/2401.01234" not in web.hits  # the version was given: no need to look it up


def test_check_reports_a_changed_page_and_its_quotes_then_update_repins_it(
        bundled: Path, cli: Callable[..., Result], web: LocalServer) -> None:
    web.routes["/guide.html"] = answer(200, PAGE)
    ok(cli("source", "add", "swe-bench", web.url("/guide.html"), "--id", "guide", "--workspace", bundled))
    for text in ("starts a fresh container for every task", "thirty minutes of wall-clock time"):
        ok(cli("quote", "add", "--cell", "swe-bench/reset_retention", "--reviewer", "casheekar", "--source", "guide",
               text, "--workspace", bundled))
    out = ok(cli("source", "check", "swe-bench", "--workspace", bundled))
    assert "swe-bench\tguide\tunchanged" in out.stdout
    web.routes["/guide.html"] = answer(200, PAGE_V2)
    before = tree_digest(bundled)
    out = ok(cli("source", "check", "swe-bench", "--workspace", bundled))
    assert "swe-bench\tguide\tchanged\t" in out.stdout
    assert "1 of 2 quote(s) still found" in out.stdout
    assert "pin it with: protocoder source update swe-bench guide" in out.stdout
    assert tree_digest(bundled) == before  # check writes nothing
    out = ok(cli("source", "update", "swe-bench", "guide", "--workspace", bundled))
    assert "1 quote(s) found in this version" in out.stdout and "Drifted evidence: 1 quote(s)" in out.stdout
    pinned = next(s for s in sources_of(bundled) if s.get("id") == "guide")
    assert snapshot_bytes(bundled, pinned) == PAGE_V2
    assert pinned["url"] == web.url("/guide.html")
    out = ok(cli("source", "check", "swe-bench", "--workspace", bundled))
    assert "swe-bench\tguide\tunchanged" in out.stdout


def test_check_compares_a_github_file_by_its_branch_commit(bundled: Path, cli: Callable[..., Result],
                                                            web: LocalServer) -> None:
    _github(web, COMMIT, CODE)
    ok(cli("source", "add", "swe-bench", "https://github.com/octo/harness/blob/main/agent/run.py", "--id", "run",
           "--workspace", bundled))
    web.hits.clear()
    out = ok(cli("source", "check", "swe-bench", "--workspace", bundled))
    assert f"swe-bench\trun\tunchanged\tcommit {COMMIT[:12]}" in out.stdout
    assert web.hits == ["/api/repos/octo/harness/commits/main"]  # the file itself is not read again
    _github(web, COMMIT2, CODE.replace(b"auto_remove=True", b"auto_remove=False"))
    out = ok(cli("source", "check", "swe-bench", "--workspace", bundled))
    assert f"swe-bench\trun\tchanged\tcommit {COMMIT2[:12]}" in out.stdout


def test_check_says_which_sources_could_not_be_checked(bundled: Path, cli: Callable[..., Result],
                                                       web: LocalServer) -> None:
    web.routes["/guide.html"] = answer(200, PAGE)
    ok(cli("source", "add", "swe-bench", web.url("/guide.html"), "--id", "guide", "--workspace", bundled))
    web.routes["/guide.html"] = answer(503, b"down", "text/plain")
    result = cli("source", "check", "swe-bench", "--workspace", bundled)
    assert result.exit_code == 1
    assert "swe-bench\tguide\tcannot check\tthe server answered 503" in result.stdout


def test_a_malformed_limit_in_the_environment_is_refused(bundled: Path, cli: Callable[..., Result],
                                                         web: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    web.routes["/page"] = answer(200, PAGE)
    monkeypatch.setenv("PROTOCODER_FETCH_TIMEOUT", "soon")
    before = tree_digest(bundled)
    result = cli("source", "add", "swe-bench", web.url("/page"), "--workspace", bundled)
    assert result.exit_code == 1
    assert result.stderr.strip().endswith("PROTOCODER_FETCH_TIMEOUT: expected a positive number of seconds, "
                                          "found 'soon'")
    assert tree_digest(bundled) == before and web.hits == []


def test_check_asks_with_the_etag_and_a_304_means_unchanged(bundled: Path, cli: Callable[..., Result],
                                                            web: LocalServer) -> None:
    served = {"etag": '"v1"', "body": PAGE, "full": 0}

    def conditional(handler) -> None:  # noqa: ANN001 (http.server's handler)
        if handler.headers.get("If-None-Match") == served["etag"]:
            handler.send_response(304)
            handler.send_header("ETag", served["etag"])
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        served["full"] += 1
        answer(200, served["body"], headers={"ETag": served["etag"]})(handler)

    web.routes["/guide.html"] = conditional
    ok(cli("source", "add", "swe-bench", web.url("/guide.html"), "--id", "guide", "--workspace", bundled))
    out = ok(cli("source", "check", "swe-bench", "--workspace", bundled))
    assert "swe-bench\tguide\tunchanged\tnot modified" in out.stdout
    assert served["full"] == 1  # the page was sent once, when it was pinned
    served.update(etag='"v2"', body=PAGE_V2)
    out = ok(cli("source", "check", "swe-bench", "--workspace", bundled))
    assert "swe-bench\tguide\tchanged\t" in out.stdout and served["full"] == 2


def test_update_without_a_file_needs_a_source_that_lives_somewhere(bundled: Path, cli: Callable[..., Result],
                                                                   tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nA local copy only.\n", encoding="utf-8")
    ok(cli("source", "add", "swe-bench", notes, "--id", "notes", "--workspace", bundled))
    before = tree_digest(bundled)
    result = cli("source", "update", "swe-bench", "notes", "--workspace", bundled)
    assert result.exit_code == 1
    assert "was pinned from a local file and has no URL; give the new version's file: protocoder source update " \
           "swe-bench notes FILE" in result.stderr
    assert tree_digest(bundled) == before
    out = ok(cli("source", "check", "swe-bench", "--workspace", bundled))
    assert "swe-bench\tnotes\tlocal\tpinned from a file" in out.stdout
