"""Polite HTTP GETs on one host: robots.txt obeyed, a User-Agent naming Inkwell, time limits, a size cap
that stops reading, redirects to another host refused, and conditional requests (ETag,
If-Modified-Since) so a re-sync of an unchanged page costs a 304.

The standard library's urllib does the work (no new dependency): its socket timeout bounds each read,
and `get` adds a whole-request deadline so a server that trickles a byte at a time is cut off too.
Every problem is a `FetchError` whose message is one line naming the reason ("HTTP 404", "timed out
after 10 s", "redirects to another host (evil.example): refused").
"""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request
import urllib.robotparser
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

USER_AGENT = "Inkwell/0.1 (blog ingest for reader questions; +https://github.com/inkwell)"
ROBOTS_AGENT = "Inkwell"
TIMEOUT = 10.0  # seconds per connect or read
DEADLINE = 30.0  # seconds for one whole request, however the server trickles
MAX_PAGE_BYTES = 5 * 1024 * 1024  # a page (a post) larger than this is refused
MAX_XML_BYTES = 20 * 1024 * 1024  # a feed or sitemap
MAX_CRAWL_DELAY = 10.0  # seconds: a robots.txt Crawl-delay above this is capped
_READ = 64 * 1024
_MB = 1024 * 1024


class FetchError(Exception):
    """A URL that could not be read; `str()` is the one-line reason, `url` the address asked for."""

    def __init__(self, url: str, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.url = url
        self.reason = reason
        self.status = status

    @property
    def gone(self) -> bool:
        """The server says the page does not exist (404, 410): not a passing failure."""
        return self.status in (404, 410)


@dataclass(frozen=True)
class Response:
    url: str  # after same-host redirects
    status: int
    body: bytes
    content_type: str  # lowercased, without parameters
    charset: str
    etag: str = ""
    last_modified: str = ""

    @property
    def not_modified(self) -> bool:
        return self.status == 304


def host_of(url: str) -> str:
    """The URL's host, lowercased, without port or credentials ('' when there is none)."""
    return (urlsplit(url).hostname or "").lower()


def check_url(url: str) -> str:
    """The URL if it is http(s) with a host (and a valid port, if any); else ValueError naming what is
    wrong ("http://: no host name in the address", not Python's bare "Invalid IPv6 URL")."""
    try:
        parts = urlsplit(url.strip())
        host, _ = parts.hostname, parts.port  # .port raises for a port out of range or not a number
    except ValueError as exc:
        raise ValueError(f"{url}: not a valid web address ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"{url}: not an http(s) address")
    if not host:
        raise ValueError(f"{url}: no host name in the address")
    return url.strip()


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects on the same host only: a page that sends us elsewhere is refused by name."""

    max_redirections = 5

    def __init__(self, host: str) -> None:
        self.host = host

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        target = host_of(urljoin(req.full_url, newurl))
        if target != self.host:
            raise FetchError(req.full_url, f"redirects to another host ({target or newurl}): refused", code)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class Fetcher:
    """GETs on `host` only (other hosts are refused), obeying its robots.txt for `ROBOTS_AGENT`.

    Thread-safe: `get` may be called from a few worker threads at once; a robots.txt Crawl-delay
    spaces their requests."""

    def __init__(
        self,
        host: str,
        *,
        timeout: float = TIMEOUT,
        deadline: float = DEADLINE,
        max_page_bytes: int = MAX_PAGE_BYTES,
        robots: bool = True,
    ) -> None:
        self.host = host.lower()
        self.timeout = timeout
        self.deadline = deadline
        self.max_page_bytes = max_page_bytes
        self._opener = urllib.request.build_opener(_SameHostRedirects(self.host))
        self._robots: urllib.robotparser.RobotFileParser | None = None
        self._robots_checked = not robots
        self._lock = threading.Lock()
        self._next_slot = 0.0
        self.delay = 0.0
        self.requests = 0

    # robots.txt --------------------------------------------------------------------------------

    def robots(self, base: str) -> urllib.robotparser.RobotFileParser | None:
        """The host's robots.txt, read once (None: none, or not obeyed)."""
        with self._lock:
            if self._robots_checked:
                return self._robots
            self._robots_checked = True
        url = urljoin(base, "/robots.txt")
        parser = urllib.robotparser.RobotFileParser(url)
        try:
            response = self._get(url, max_bytes=512 * 1024)
        except FetchError as exc:
            if exc.status in (401, 403):
                parser.disallow_all = True  # what RobotFileParser.read does for these
            elif exc.status is not None and exc.status >= 500:
                parser.disallow_all = True  # RFC 9309: an unreachable robots.txt means "crawl nothing"
            else:
                return None  # none (404) or no answer: the page requests report their own failures
        else:
            parser.parse(response.body.decode("utf-8", "replace").splitlines())
            self.delay = min(MAX_CRAWL_DELAY, float(parser.crawl_delay(ROBOTS_AGENT) or 0))
        self._robots = parser
        return parser

    def allowed(self, url: str) -> bool:
        parser = self.robots(url)
        return parser is None or parser.can_fetch(ROBOTS_AGENT, url)

    def sitemaps(self, base: str) -> list[str]:
        """The Sitemap: lines of the host's robots.txt."""
        parser = self.robots(base)
        return list(parser.site_maps() or []) if parser is not None else []

    # GET ---------------------------------------------------------------------------------------

    def get(
        self,
        url: str,
        *,
        etag: str = "",
        last_modified: str = "",
        max_bytes: int | None = None,
        accept: str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.5",
    ) -> Response:
        """The response to GET `url` (a 304 when `etag`/`last_modified` still hold); FetchError
        naming the reason otherwise: another host, robots.txt, an HTTP error, a timeout, too big."""
        url = check_url(url)
        if host_of(url) != self.host:
            raise FetchError(url, f"on another host ({host_of(url)}) than the source ({self.host}): refused")
        if not self.allowed(url):
            raise FetchError(url, "disallowed by the site's robots.txt: not fetched")
        self._wait_turn()
        return self._get(url, etag=etag, last_modified=last_modified, max_bytes=max_bytes, accept=accept)

    def _wait_turn(self) -> None:
        if not self.delay:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next_slot)
            self._next_slot = start + self.delay
        time.sleep(max(0.0, start - now))

    def _get(
        self,
        url: str,
        *,
        etag: str = "",
        last_modified: str = "",
        max_bytes: int | None = None,
        accept: str = "*/*",
    ) -> Response:
        limit = max_bytes or self.max_page_bytes
        headers = {"User-Agent": USER_AGENT, "Accept": accept, "Accept-Encoding": "identity"}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        request = urllib.request.Request(url, headers=headers)
        self.requests += 1
        started = time.monotonic()
        try:
            with self._opener.open(request, timeout=self.timeout) as reply:
                body = self._read(url, reply, limit, started)
                return _response(reply.geturl(), reply.status, reply.headers, body)
        except FetchError:
            raise
        except urllib.error.HTTPError as exc:
            if exc.code == 304:
                return _response(url, 304, exc.headers, b"", etag, last_modified)
            raise FetchError(url, f"HTTP {exc.code} {exc.reason}".strip(), exc.code) from None
        except TimeoutError:
            raise FetchError(url, f"timed out after {self.timeout:g} s") from None
        except urllib.error.URLError as exc:
            raise FetchError(url, _network_reason(exc.reason, self.timeout)) from None
        except (OSError, ValueError) as exc:  # reset connections, malformed replies (http.client)
            raise FetchError(url, _network_reason(exc, self.timeout)) from None

    def _read(self, url: str, reply: Any, limit: int, started: float) -> bytes:
        declared = reply.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise FetchError(url, f"{_size(int(declared))}, over the {_size(limit)} limit: not read")
        parts: list[bytes] = []
        size = 0
        while True:
            if time.monotonic() - started > self.deadline:
                raise FetchError(url, f"took longer than {self.deadline:g} s to send: stopped reading")
            part = reply.read(_READ)
            if not part:
                return b"".join(parts)
            size += len(part)
            if size > limit:
                raise FetchError(url, f"larger than the {_size(limit)} limit: stopped reading")
            parts.append(part)


def _response(
    url: str, status: int, headers: Any, body: bytes, etag: str = "", last_modified: str = ""
) -> Response:
    kind = headers.get_content_type() if headers is not None else ""
    charset = (headers.get_content_charset() or "") if headers is not None else ""
    return Response(
        url,
        status,
        body,
        kind.lower(),
        charset,
        (headers.get("ETag") if headers is not None else "") or etag,
        (headers.get("Last-Modified") if headers is not None else "") or last_modified,
    )


def _network_reason(reason: Any, timeout: float) -> str:
    if isinstance(reason, TimeoutError | socket.timeout):
        return f"timed out after {timeout:g} s"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (is the site up?)"
    if isinstance(reason, socket.gaierror):
        return "unknown host (no DNS entry)"
    text = " ".join(str(getattr(reason, "strerror", None) or reason).split())
    return f"could not connect: {text[:200]}"


def _size(count: int) -> str:
    return f"{count / _MB:.1f} MB" if count >= _MB else f"{count / 1024:.0f} KB"
