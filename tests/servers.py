"""Test helpers: a scripted OpenAI-compatible HTTP server on loopback.

Tests talk to it with the real `openai` client over real HTTP, so retries, timeouts, SSE parsing and
headers are exercised for real. Script the replies in order; every request is recorded.

    with ScriptedOpenAIServer() as server:
        server.error(429, retry_after="0.01")
        server.chat("Hello there.")              # streamed or not, following the request's "stream" flag
        settings = Settings(openai_base_url=server.base_url, max_retries=2)
        assert chat(settings, [...]) == "Hello there."
        assert len(server.requests) == 2

A request with no scripted reply left goes to `server.responder` when one is set (a function of the
request's JSON body returning a Reply: for replies that depend on the request, e.g. under concurrency),
else gets `server.default` (a 400 that says so, which the client does not retry), so unexpected calls
fail loudly instead of hanging. `server.max_in_flight` is the most requests it was handling at once;
`server.dropped` counts streams whose client hung up before the end (see `Reply.pause`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import select
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted response.

    `body` is JSON (dict) or raw bytes; `events` (list of JSON-able dicts) makes it an SSE stream ended by
    `data: [DONE]`; `chat_text` makes it a chat completion rendered as JSON or SSE depending on whether
    the request asked for `stream`; `vectors` makes it an embeddings response, as float lists or as
    base64 float32 depending on the request's `encoding_format` (the openai client asks for base64 unless
    told otherwise); `delay` sleeps before answering (to provoke client timeouts); `finish_reason` ends a
    `chat_text` reply ("length": the model ran out of tokens).
    """

    status: int = 200
    body: dict | bytes | None = None
    events: list[dict] | None = None
    chat_text: str | list[str] | None = None
    vectors: list[list[float]] | None = None
    usage: dict | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    finish_reason: str = "stop"
    pause: float = 0.0


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, or the raw text when it was not JSON
    time: float

    @property
    def authorization(self) -> str:
        return self.headers.get("authorization", "")


def chat_completion(
    text: str, *, model: str = "scripted-model", usage: dict | None = None, finish_reason: str = "stop"
) -> dict:
    """A non-streamed chat completion exactly as OpenAI shapes it."""
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        "system_fingerprint": None,
    }


def chat_chunks(
    deltas: Iterable[str],
    *,
    model: str = "scripted-model",
    usage: dict | None = None,
    include_usage: bool = True,
    finish_reason: str = "stop",
) -> list[dict]:
    """The chat.completion.chunk events OpenAI streams: role first, one per delta, a finish chunk, then
    (when the request asked for it) a usage chunk with no choices."""
    created = int(time.time())

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({"content": d}) for d in deltas]
    events.append(chunk({}, finish_reason))
    if include_usage:
        events.append(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": None,
                "choices": [],
                "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )
    return events


def split_deltas(text: str) -> list[str]:
    """Split text into word-sized deltas that concatenate back to it."""
    parts, current = [], ""
    for ch in text:
        if ch == " " and current.strip():
            parts.append(current)
            current = ""
        current += ch
    if current:
        parts.append(current)
    return parts


def split_every(text: str, size: int) -> list[str]:
    """Split text into deltas of `size` characters (the last may be shorter), wherever that cuts."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def embeddings_response(
    vectors: list[list[float]], *, model: str = "scripted-embed", encoding_format: str = "float"
) -> dict:
    def encode(v: list[float]) -> list[float] | str:
        if encoding_format == "base64":
            return base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode()
        return list(v)

    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": encode(v)} for i, v in enumerate(vectors)],
        "model": model,
        "usage": {"prompt_tokens": 3 * len(vectors), "total_tokens": 3 * len(vectors)},
    }


def error_body(message: str, *, type: str = "invalid_request_error", code: str | None = None) -> dict:
    return {"error": {"message": message, "type": type, "param": None, "code": code}}


class _QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client dropping a kept-alive connection (or giving up on a slow reply) is normal here.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class ScriptedOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1 that answers each request with the next scripted Reply."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.default = Reply(
            status=400, body=error_body("ScriptedOpenAIServer: no reply scripted for this request")
        )
        self.responder: Callable[[dict], Reply] | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self.dropped = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # Lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        handler = _make_handler(self)
        self._httpd = _QuietHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="scripted-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()  # wakes handlers sleeping in a `delay`
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # Scripting -------------------------------------------------------------------------------------------

    def push(self, *replies: Reply) -> ScriptedOpenAIServer:
        with self._lock:
            self.replies.extend(replies)
        return self

    def chat(
        self,
        text: str | list[str],
        *,
        usage: dict | None = None,
        delay: float = 0.0,
        finish_reason: str = "stop",
    ) -> ScriptedOpenAIServer:
        """Answer a chat completion with `text` (a list of strings = the exact stream deltas), ending with
        `finish_reason` ("length": as if the model had run out of tokens)."""
        return self.push(Reply(chat_text=text, usage=usage, delay=delay, finish_reason=finish_reason))

    def embeddings(self, vectors: list[list[float]]) -> ScriptedOpenAIServer:
        return self.push(Reply(vectors=vectors))

    def error(
        self,
        status: int,
        message: str = "scripted error",
        *,
        code: str | None = None,
        type: str = "invalid_request_error",
        retry_after: str | None = "0.01",
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> ScriptedOpenAIServer:
        """Answer with an OpenAI-shaped error. `retry_after` (seconds, sent as Retry-After) keeps the
        client's retries fast; pass None to let it use its own exponential backoff."""
        all_headers = dict(headers or {})
        if retry_after is not None:
            all_headers.setdefault("Retry-After", retry_after)
        body = error_body(message, type=type, code=code)
        return self.push(*(Reply(status=status, body=body, headers=all_headers) for _ in range(times)))

    def hang(self, seconds: float, *, times: int = 1) -> ScriptedOpenAIServer:
        """Sleep `seconds` before answering (with a chat completion), to outlast the client's timeout."""
        return self.push(*(Reply(chat_text="too late", delay=seconds) for _ in range(times)))

    # Inspection ------------------------------------------------------------------------------------------

    def requests_to(self, suffix: str) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith(suffix)]

    @property
    def chat_requests(self) -> list[Recorded]:
        return self.requests_to("/chat/completions")

    def _next_reply(self, body: Any = None) -> Reply:
        with self._lock:
            if self.replies:
                return self.replies.popleft()
            responder = self.responder
        if responder is not None:
            return responder(body if isinstance(body, dict) else {})
        return self.default

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)


def _make_handler(server: ScriptedOpenAIServer) -> Callable[..., BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            self._handle()

        def do_POST(self) -> None:
            self._handle()

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            server._record(Recorded(self.command, self.path, headers, body, time.time()))
            server._enter()
            try:
                reply = server._next_reply(body)
                if reply.delay and server._closing.wait(reply.delay):
                    return
                # BrokenPipe/ConnectionReset: the client gave up (timeout), nothing to do.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send(reply, body if isinstance(body, dict) else {})
            finally:
                server._leave()

        def _send(self, reply: Reply, request: dict) -> None:
            wants_stream = bool(request.get("stream"))
            if reply.chat_text is not None:
                deltas = (
                    reply.chat_text if isinstance(reply.chat_text, list) else split_deltas(reply.chat_text)
                )
                if wants_stream:
                    include = bool((request.get("stream_options") or {}).get("include_usage"))
                    events = chat_chunks(
                        deltas, usage=reply.usage, include_usage=include, finish_reason=reply.finish_reason
                    )
                    self._send_sse(reply, events)
                else:
                    completion = chat_completion(
                        "".join(deltas), usage=reply.usage, finish_reason=reply.finish_reason
                    )
                    self._send_json(reply, completion)
            elif reply.vectors is not None:
                fmt = request.get("encoding_format") or "float"
                self._send_json(reply, embeddings_response(reply.vectors, encoding_format=fmt))
            elif reply.events is not None:
                self._send_sse(reply, reply.events)
            else:
                self._send_json(reply, reply.body if reply.body is not None else {})

        def _send_json(self, reply: Reply, body: dict | bytes) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _send_sse(self, reply: Reply, events: list[dict]) -> None:
            self.send_response(reply.status)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            for i, event in enumerate([*(f"data: {json.dumps(e)}\n\n" for e in events), "data: [DONE]\n\n"]):
                data = event.encode()
                if i == 1 and reply.pause:
                    end = time.monotonic() + reply.pause
                    while time.monotonic() < end:  # watching the connection, as llama.cpp does
                        if server._closing.wait(0.02):
                            return
                        if self._client_gone():
                            with server._lock:
                                server.dropped += 1
                            return
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _client_gone(self) -> bool:
            """The client closed or shut down its end (a read would return nothing)."""
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            try:
                return self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True

    return Handler
