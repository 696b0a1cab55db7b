"""A real HTTP server on 127.0.0.1 for the fetch tests: routes that answer, redirect, fail,
stall, trickle, send too much, or send gzip.

Each route is a function of the request handler that writes the whole answer itself, so a
test can answer exactly as a misbehaving server would (a body over the limit without a
Content-Length, a pause between chunks). Requests are recorded in :attr:`LocalServer.hits`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Route = Callable[[BaseHTTPRequestHandler], None]


class LocalServer:
    """The server's routes and what was asked of it."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: list[str] = []
        self.base = ""

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` on this server."""
        return self.base + path


def answer(status: int, body: bytes, content_type: str = "text/html; charset=utf-8",
           headers: dict[str, str] | None = None) -> Route:
    """A route that answers once with a Content-Length."""
    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(body)
    return route


def redirect(location: str, status: int = 302) -> Route:
    """A route that sends the client elsewhere."""
    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
    return route


def chunks(parts: Iterator[bytes] | list[bytes], content_type: str = "text/plain", delay: float = 0.0) -> Route:
    """A route that streams ``parts`` with chunked transfer encoding (no Content-Length), ``delay`` seconds apart."""
    def route(handler: BaseHTTPRequestHandler) -> None:
        import time

        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        try:
            for part in parts:
                if delay:
                    time.sleep(delay)
                handler.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                handler.wfile.flush()
            handler.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should
    return route


@contextmanager
def serve(server: LocalServer) -> Iterator[LocalServer]:
    """Run ``server`` on a free port of 127.0.0.1 in a thread for the duration of the block."""
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            server.hits.append(self.path)
            route = server.routes.get(self.path.split("?")[0])
            if route is None:
                answer(404, b"not here", "text/plain")(self)
            else:
                route(self)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass  # a client that hangs up early (as the fetcher does on a body over the limit) is expected

    httpd = Server(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    server.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
