"""Test helper: a small web site on 127.0.0.1 whose pages a test edits between requests.

    with SiteServer() as site:
        site.page("/posts/one/", "<html>…</html>")           # text/html, with an ETag and Last-Modified
        site.add("/feed.xml", feed_bytes, "application/rss+xml")
        site.add("/slow/", b"...", delay=3)                 # answers after 3 s
        site.redirect("/away/", "http://elsewhere.test/")    # a 302 to another host
        site.url("/feed.xml")                                # http://127.0.0.1:PORT/feed.xml

Conditional requests are honoured: a GET whose If-None-Match names the page's current ETag gets a 304.
`site.requests` records (path, headers) of every request, `site.times` (path, time.monotonic()); `site.hits(path)`
counts one path's.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Resource:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    trickle: float = 0.0  # seconds between 1 KB pieces of the body
    length: int | None = None  # a Content-Length to declare instead of the real one (None: real)
    stream: int = 0  # send this many bytes of filler without a Content-Length (a huge page)

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha1(self.body).hexdigest()[:16] + '"'


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:  # a client that hung up
        pass


class SiteServer:
    def __init__(self) -> None:
        self.resources: dict[str, Resource] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.times: list[tuple[str, float]] = []  # (path, time.monotonic()) of every request, in order
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> SiteServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def add(
        self, path: str, body: bytes | str, content_type: str = "text/html; charset=utf-8", **kw: Any
    ) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        with self._lock:
            self.resources[path] = Resource(data, content_type, **kw)

    def page(self, path: str, html: str, **kw: Any) -> None:
        self.add(path, html, **kw)

    def remove(self, path: str) -> None:
        with self._lock:
            self.resources.pop(path, None)

    def redirect(self, path: str, to: str, status: int = 302) -> None:
        self.add(path, b"", status=status, headers={"Location": to})

    def hits(self, path: str) -> int:
        return sum(1 for p, _ in self.requests if p == path)


def _handler(site: SiteServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            with site._lock:
                site.requests.append((self.path, dict(self.headers)))
                site.times.append((self.path, time.monotonic()))
                found = site.resources.get(self.path)
            if found is None:
                self._send(404, b"not found", "text/plain")
                return
            if found.delay:
                time.sleep(found.delay)
            if found.status == 200 and self.headers.get("If-None-Match") == found.etag:
                self.send_response(304)
                self.send_header("ETag", found.etag)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if found.stream:
                self._stream(found)
                return
            self._send(found.status, found.body, found.content_type, found)

        def _send(self, status: int, body: bytes, kind: str, res: Resource | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            length = res.length if res is not None and res.length is not None else len(body)
            self.send_header("Content-Length", str(length))
            if res is not None and status == 200:
                self.send_header("ETag", res.etag)
                self.send_header("Last-Modified", "Mon, 06 Sep 2021 16:45:00 GMT")
            for name, value in (res.headers if res is not None else {}).items():
                self.send_header(name, value)
            self.end_headers()
            try:
                if res is not None and res.trickle:
                    for start in range(0, len(body), 1024):
                        self.wfile.write(body[start : start + 1024])
                        self.wfile.flush()
                        time.sleep(res.trickle)
                else:
                    self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _stream(self, res: Resource) -> None:
            self.send_response(200)
            self.send_header("Content-Type", res.content_type)
            self.send_header("Connection", "close")
            self.end_headers()
            piece = b"<p>" + b"x" * 65_530 + b"</p>\n"
            sent = 0
            try:
                while sent < res.stream:
                    self.wfile.write(piece)
                    sent += len(piece)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

    return Handler
