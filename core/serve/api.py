"""The HTTP API for the author's blog, served beside the chat in the same process (`server.py` passes
`routes()` to Streamlit's `st.App`):

    POST /api/ask      {"question": "...", "conversation": [{"role", "content"}...]?, "collection": ...?,
                        "mode": "extractive" | "generative" | "auto"?}
                       → the reply as JSON; with `Accept: text/event-stream`, as server-sent events
    POST /api/feedback {"question_id": "...", "up": true|false, "comment": "..."?} → the reader's rating
    GET  /api/search   ?q=...&k=10 → the retrieved excerpts
    GET  /api/health   → {"status": "ok", "posts": n, "chunks": m}; 503 {"status": "unavailable", "problem",
                         "error"} saying what keeps it from answering (core/serve/health.py)
    GET  /api/welcome  → {"title", "greeting", "starters": [...]} from the owner's Settings page,
                         {"question_log", "privacy_note"}: whether questions are kept, and the note saying so,
                         and {"language", "labels"}: the widget's fixed words in the blog's language
    GET  /api/openapi.json → this API's OpenAPI description
    GET  /widget.js    → the widget the author pastes into the blog (core/serve/widget.js)

Answered questions go into the question log (core/store/questions.py, source "api", or "widget" when the
request says `"client": "widget"`) like the chat's.
Questions take the readers' one turn (core/answer/turn.py), so the API answers as the chat does, behind
the chat's guards: the question length cap, a per-client rate limit (`questions_per_minute`), and the
process's line for model-written answers with its time limit. Every error is JSON with a plain message
and the right status (400, 403, 413, 429, 503, 500), never a traceback. Browsers may call it only from
the origins the owner lists (`allowed_origins`); with none listed, no cross-origin call is allowed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, urljoin

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from core.answer import Reply, Turn, take_turn
from core.answer.owner import load_owner
from core.answer.record import record
from core.config import ANSWER_MODES, ConfigError, Settings
from core.embed import EmbedError
from core.llm import LLMError
from core.search import search
from core.serve.admission import AnswerRefused, AnswerStopped
from core.serve.clients import request_client
from core.serve.guard import ClientLimits
from core.serve.health import check_health
from core.serve.openapi import OPENAPI
from core.serve.resources import shared_embedder, shared_gate, shared_question_log, shared_store
from core.store import StoreError
from core.store.corpus import corpus_language
from core.store.questions import PRIVACY_NOTE
from core.text import UNDETERMINED, QuestionError, check_question, detect_language
from core.text.fragments import citation_link
from core.text.labels import label_language, labels
from core.text.question import has_surrogates

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024  # a question, a conversation and options: far less than this
MAX_TURNS = 20  # earlier turns a client may send (the chat keeps more, but a follow-up needs few)
MAX_TURN_CHARS = 8000
MAX_K = 50
SSE = "text/event-stream"
ORIGIN_REFUSED = "This site may not use the API: the blog's owner has not allowed it."
# Failures with a message meant for people (a broken table, a model that cannot be reached, bad settings).
KNOWN = (ConfigError, StoreError, EmbedError, LLMError, OSError, ValueError)


class ApiError(Exception):
    """A request answered with `status` and a JSON body {"error": message}. A refusal of the reader's
    question (empty, too long, too many a minute) has `in_language`, its message in a reader's language:
    `Api._in_readers_language` puts it in the question's (core/text/labels.py)."""

    def __init__(
        self,
        status: int,
        message: str,
        headers: dict[str, str] | None = None,
        in_language: Callable[[str | None], str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}
        self.in_language = in_language


@dataclass(frozen=True)
class AskRequest:
    question: str
    conversation: list[dict]
    collections: list[str] | None
    mode: str | None
    source: str = "api"  # the question log's source: "widget" when the blog widget asks


# Reading requests --------------------------------------------------------------------------------------


ASK_EXAMPLE = '{"question": "..."}'
FEEDBACK_EXAMPLE = '{"question_id": "...", "up": true or false, "comment": "..."}'


async def _body(request: Request, example: str = ASK_EXAMPLE) -> dict:
    """The request's JSON object; ApiError 413 past MAX_BODY_BYTES, 400 when it is not a JSON object (the
    message shows `example`, what the endpoint takes)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise ApiError(413, f"The request is larger than {MAX_BODY_BYTES // 1024} KB.")
    raw = b""
    async for part in request.stream():
        raw += part
        if len(raw) > MAX_BODY_BYTES:
            raise ApiError(413, f"The request is larger than {MAX_BODY_BYTES // 1024} KB.")
    try:
        data = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "The request body is not valid JSON.") from None
    except RecursionError:  # [[[[… thousands deep: within 64 KB, past the parser's nesting limit
        raise ApiError(400, "The request body is nested too deeply.") from None
    if not isinstance(data, dict):
        raise ApiError(400, f"Send a JSON object such as {example}.")
    return data


def _question(value: Any, settings: Settings) -> str:
    if not isinstance(value, str):
        raise ApiError(400, '"question" must be a string.')
    try:
        return check_question(value, settings.max_question_chars)
    except QuestionError as exc:
        raise ApiError(
            413 if exc.kind == "too_long" else 400, str(exc), in_language=exc.in_language
        ) from None


def _query(request: Request) -> dict[str, str]:
    """The query string's parameters (the last of a repeated one, as Starlette's), or ApiError 400 when
    one is not UTF-8 once percent-decoded (`q=%ED%A0%80`, an encoded surrogate): Starlette's own parsing
    replaces such bytes with U+FFFD ("�"), which was then searched as if asked."""
    try:
        text = request.scope.get("query_string", b"").decode("utf-8")
        return dict(parse_qsl(text, keep_blank_values=True, encoding="utf-8", errors="strict"))
    except UnicodeDecodeError:
        raise ApiError(
            400, "The query string holds bytes that are not UTF-8 text: encode it as UTF-8."
        ) from None


def _no_surrogates(text: str, field: str) -> str:
    """`text`, or ApiError 400 when it holds a lone surrogate (JSON's "\\ud800"): it cannot be stored or
    written back as UTF-8, nor tokenized."""
    if has_surrogates(text):
        raise ApiError(400, f'"{field}" holds a broken character (an unpaired UTF-16 surrogate).')
    return text


def _conversation(value: Any) -> list[dict]:
    """Earlier turns as sent by the widget: [{"role": "user"|"assistant", "content": "..."}], oldest first."""
    if value in (None, ""):
        return []
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        raise ApiError(400, '"conversation" must be a list of {"role", "content"} objects.')
    turns = []
    for m in value[-MAX_TURNS:]:
        role, content = m.get("role"), m.get("content")
        if role not in ("user", "assistant") or not isinstance(content, str):
            raise ApiError(
                400, 'Each turn of "conversation" needs a role ("user" or "assistant") and content.'
            )
        turns.append({"role": role, "content": _no_surrogates(content[:MAX_TURN_CHARS], "conversation")})
    return turns


def _collections(value: Any) -> list[str] | None:
    if value in (None, "", []):
        return None
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        raise ApiError(400, '"collection" must be a collection name or a list of them.')
    return [_no_surrogates(v, "collection") for v in values]


def _mode(value: Any, settings: Settings) -> str | None:
    """The answer mode asked for; a generated answer only when a real model is configured (the built-in
    one writes poor answers: readers are not offered it, as in the chat) or the owner chose it."""
    if value in (None, ""):
        return None
    if value not in ANSWER_MODES:
        raise ApiError(400, f'"mode" must be one of {", ".join(ANSWER_MODES)}.')
    if value == "generative" and settings.uses_builtin_llm and settings.answer_mode != "generative":
        raise ApiError(400, "Generated answers are not offered here: the answers quote the author.")
    return value


def parse_ask(data: dict, settings: Settings) -> AskRequest:
    """The ask request's fields, checked (ApiError 400/413 with the reason)."""
    return AskRequest(
        _question(data.get("question"), settings),
        _conversation(data.get("conversation")),
        _collections(data.get("collection", data.get("collections"))),
        _mode(data.get("mode"), settings),
        _source(data.get("client")),
    )


def _source(value: Any) -> str:
    """Where a question comes from, for the question log: "widget" when the widget says so, else "api"."""
    if value is None or value == "api":
        return "api"
    if value == "widget":
        return "widget"
    raise ApiError(400, '"client" is "widget" (the blog widget) or left out.')


# Writing replies ---------------------------------------------------------------------------------------


def _post_ref(item: Any, base: str, sentences: Iterable[str] = ()) -> dict:
    """A cited or suggested post as readers get it: id, title, its web address when known, and `link`,
    where a click goes: the post's page opened at `sentences` (a text fragment), or, for a post without
    an address, Inkwell's reader page at `base` marking them."""
    url = getattr(item, "url", "") or ""
    return {
        "post_id": item.post_id,
        "title": item.title,
        "url": url or None,
        "link": urljoin(base, citation_link(item.post_id, url, list(sentences))),
    }


def answer_json(turn: Turn, base: str, blog_language: str | None = None) -> dict:
    """What a reader's client gets for one turn: the answer (Markdown) and `answer_text`, the same in
    plain text for clients that show text (the widget: a title's `&`, `*` or `<` as written); `lang`, the
    language of the author's words it shows (ISO 639-1, null when it cannot be told); how it was made;
    the quoted sentences and, for quotes, the passages per post in plain text; the posts they come from;
    the closest posts when declined (no relevance numbers, no model or server details). `base` is
    Inkwell's own address, for the reader-page links of posts without one. `language` and `labels` are
    the widget's fixed words ("Searched for:", "Sources:") in the language the reader is answered in
    (core/text/labels.py: the question's, else `blog_language`)."""
    language = label_language(turn.question, blog_language)
    reply = turn.reply
    extracted = reply.extracted if reply.mode == "extractive" else None
    quoted: dict[str, list[str]] = {}
    for q in reply.quotes:
        quoted.setdefault(q.post_id, []).append(q.text)
    refs = {q.post_id: q for q in reply.quotes}
    words = labels(language)
    return {
        "question": turn.question,
        "searched_for": turn.query if turn.rewritten else None,
        "mode": reply.mode,
        # A quoted answer's "From <title>:" in the reader's language, as the widget's other words.
        "answer": extracted.markdown(words["from_post"]) if extracted else reply.text,
        "answer_text": extracted.plain(words["from_post"]) if extracted else reply.plain_text,
        "declined": reply.mode == "none" or reply.declined,
        # For a client's lang attribute: a screen reader reads a German answer in German on an English page.
        "lang": None if (lang := detect_language(_shown_words(reply))) == UNDETERMINED else lang,
        "sentences": [{**_post_ref(q, base, [q.text]), "text": q.text} for q in reply.quotes],
        "passages": [
            {**_post_ref(refs[post_id], base, quoted[post_id]), "text": text}
            for post_id, _, text in (extracted.passages() if extracted else [])
        ],
        "sources": [_post_ref(s, base, quoted.get(s.post_id, ())) for s in reply.sources],
        "suggestions": [_post_ref(s, base) for s in reply.suggestions],
        "note": reply.fallback_note or None,
        "collections": turn.route.collections,
        "language": language,
        "labels": words,
    }


def _shown_words(reply: Reply) -> str:
    """The author's words a reply shows (its passages, not the "From <title>:" frames, which are in the
    reader's language), or its fixed sentence."""
    if reply.mode == "extractive" and reply.extracted is not None:
        return "\n\n".join(body for *_, body in reply.extracted.passages())
    return reply.plain_text


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)


def _sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _check_collections(collections: Sequence[str], settings: Settings) -> None:
    """ApiError 400 naming the first collection the table does not have: a widget's mistyped
    data-collection would otherwise decline every question."""
    known = shared_store(settings).collections()
    unknown = sorted(set(collections) - set(known))
    if unknown:
        names = ", ".join(known) or "none yet"
        raise ApiError(400, f'No collection named "{unknown[0]}" (the collections: {names}).')


# The API -----------------------------------------------------------------------------------------------


class Api:
    """The handlers, over settings read afresh for each request from `settings_source` (so the owner's
    saved settings apply without a restart)."""

    def __init__(self, settings_source: Callable[[], Settings]) -> None:
        self.settings_source = settings_source
        self.limits = ClientLimits()
        self.ratings = ClientLimits()  # ratings counted apart: rating an answer costs no question

    def _settings(self) -> Settings:
        try:
            return self.settings_source()
        except ConfigError as exc:
            raise ApiError(500, f"Inkwell's settings are invalid: {exc}") from None

    @staticmethod
    def _check_origin(request: Request, settings: Settings) -> None:
        """ApiError 403 for a browser page of an origin the owner did not allow."""
        origin = request.headers.get("origin")
        if origin and not _same_origin(request, origin) and origin not in settings.allowed_origin_list:
            raise ApiError(403, ORIGIN_REFUSED)

    def _admit(self, request: Request, settings: Settings, limits: ClientLimits | None = None) -> str:
        """The client's key for the rate limit, once a question (or, with `limits`, another request) is
        allowed (ApiError 403/429 otherwise). Called once the request is known to be well formed, so a
        request refused with 400 costs the reader none of their questions."""
        self._check_origin(request, settings)
        # As the chat decides it (core/serve/clients.py): uvicorn has already replaced a loopback peer with
        # the X-Forwarded-For entry it liked, so any local process could name a new client each time;
        # server_peer undoes that, and the header counts only from the owner's trusted proxies.
        peer = request.client.host if request.client else None
        forwarded = request.headers.getlist("x-forwarded-for")
        client = request_client(peer, forwarded, settings.trusted_proxy_networks) or "local"
        decision = (self.limits if limits is None else limits).acquire(client, settings.questions_per_minute)
        if not decision.allowed:
            raise ApiError(429, decision.message, {"Retry-After": str(decision.wait)}, decision.in_language)
        return client

    @contextlib.asynccontextmanager
    async def _in_readers_language(self, question: Any, settings: Settings) -> AsyncIterator[None]:
        """Refusals of the reader's question raised inside (empty, too long, too many a minute) in the
        language the reader is answered in: the question's, else the blog's (label_language). The widget
        shows `error` to the reader as it is; the status stays the same in every language."""
        try:
            yield
        except ApiError as exc:
            if exc.in_language is None:
                raise
            blog = await run_in_threadpool(self._blog_language, settings)
            language = label_language(question if isinstance(question, str) else None, blog)
            raise ApiError(exc.status, exc.in_language(language), exc.headers) from None

    async def health(self, request: Request) -> Response:
        """200 {"status": "ok", "posts", "chunks"} when readers can be answered; else 503 saying what is
        wrong ({"status": "unavailable", "problem", "error"}: core/serve/health.py), never a path."""
        settings = self._settings()
        health = await run_in_threadpool(check_health, settings)
        return JSONResponse(health.json(), status_code=200 if health.problem is None else 503)

    async def welcome(self, request: Request) -> Response:
        """What the widget shows before the first question: the chat's title, the greeting and the
        starter questions the owner saved on the Settings page (empty when none were); and whether the
        question log is on, with the note the widget then shows (the chat footer's; "" when off)."""
        settings = self._settings()
        owner = await run_in_threadpool(lambda: load_owner(shared_store(settings)))
        language = label_language(None, await run_in_threadpool(self._blog_language, settings))
        return JSONResponse(
            {
                "author_name": settings.author_name,
                "title": owner.chat_title or f"Ask {settings.author_name}",
                "greeting": owner.greeting,
                "starters": list(owner.starters),
                "question_log": settings.question_log,
                "privacy_note": PRIVACY_NOTE if settings.question_log else "",
                "language": language,
                "labels": labels(language),
            }
        )

    @staticmethod
    def _blog_language(settings: Settings) -> str | None:
        """The posts' main language (None before any ingest): the labels' language before a question."""
        return corpus_language(shared_store(settings), settings.local_home)

    async def search(self, request: Request) -> Response:
        settings = self._settings()
        self._check_origin(request, settings)
        params = _query(request)
        async with self._in_readers_language(params.get("q"), settings):
            question = _question(params.get("q", ""), settings)
            k_text = params.get("k", "10")
            # ASCII digits only: str.isdigit() also passes "²" or "①", which int() refuses (a 503 before).
            if not (k_text.isascii() and k_text.isdigit()) or not 1 <= int(k_text) <= MAX_K:
                raise ApiError(400, f'"k" must be a whole number from 1 to {MAX_K}.')
            self._admit(request, settings)
        k, base = int(k_text), _base(request)

        def run() -> list[dict]:
            store = shared_store(settings)
            found = search(question, settings.replace(top_k=max(k, settings.top_k)), store=store,
                           embedder=shared_embedder(settings))  # fmt: skip
            return [
                {
                    **_post_ref(h, base),
                    "section": h.section,
                    "text": h.text,
                    "collection": h.collection,
                    "rank": h.rank,
                }
                for h in found.hits[:k]
            ]

        return JSONResponse({"question": question, "hits": await run_in_threadpool(run)})

    async def ask(self, request: Request) -> Response:
        settings = self._settings()
        self._check_origin(request, settings)
        data = await _body(request)
        async with self._in_readers_language(data.get("question"), settings):
            asked = parse_ask(data, settings)
            if asked.collections:
                await run_in_threadpool(_check_collections, asked.collections, settings)
            self._admit(request, settings)
        started, base = time.perf_counter(), _base(request)

        def turn() -> Turn:
            store = shared_store(settings)
            # As the chat: with every answer slot taken, a model rewrite of a follow-up would wait for the
            # model outside the queue, so the follow-up is joined to the question before it instead.
            gate = shared_gate(settings).status()
            return take_turn(asked.question, settings, store=store, embedder=shared_embedder(settings),
                             history=asked.conversation, collections=asked.collections,
                             mode=asked.mode, use_model=gate.running < gate.capacity)  # fmt: skip

        taken = await run_in_threadpool(turn)
        if SSE in request.headers.get("accept", ""):
            return StreamingResponse(self._events(taken, settings, started, base, asked.source), media_type=SSE,
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})  # fmt: skip

        def whole() -> dict:
            for _ in self._deltas(taken, settings):
                pass
            return self._finished(taken, settings, started, base, asked.source)

        return JSONResponse(await run_in_threadpool(whole))

    def _finished(self, turn: Turn, settings: Settings, started: float, base: str, source: str) -> dict:
        """The whole reply's JSON, once it is logged as from `source` (its `question_id` takes the reader's
        feedback)."""
        seconds = time.perf_counter() - started
        question_id = record(shared_question_log(settings), turn.reply, turn.question, source, seconds)
        reply = answer_json(turn, base, self._blog_language(settings))
        return {**reply, "question_id": question_id, "seconds": round(seconds, 3)}

    async def feedback(self, request: Request) -> Response:
        """A reader's thumbs up or down (and comment) on a logged answer: {question_id, up, comment?}."""
        settings = self._settings()
        self._check_origin(request, settings)
        data = await _body(request, FEEDBACK_EXAMPLE)
        question_id, up, comment = data.get("question_id"), data.get("up"), data.get("comment", "")
        if not isinstance(question_id, str) or not isinstance(up, bool) or not isinstance(comment, str):
            raise ApiError(400, f"Send {FEEDBACK_EXAMPLE}.")
        _no_surrogates(question_id, "question_id")
        _no_surrogates(comment, "comment")
        self._admit(request, settings, self.ratings)
        log = shared_question_log(settings)
        if not log.enabled:
            raise ApiError(404, "Questions are not kept here, so there is nothing to rate.")
        if not await run_in_threadpool(lambda: log.feedback(question_id, up, comment)):
            raise ApiError(404, "There is no such question.")
        return JSONResponse({"ok": True})

    def _deltas(self, turn: Turn, settings: Settings) -> Iterator[str]:
        """The reply's text as it comes; a generated one waits in the process's line for a slot."""
        if turn.reply.mode != "generative":
            yield from turn.reply
            return
        with shared_gate(settings).enter(owner=None) as ticket:
            yield from ticket.stream(turn.reply)

    def _events(
        self, turn: Turn, settings: Settings, started: float, base: str, source: str
    ) -> Iterator[str]:
        """Server-sent events: `meta` (mode and what was searched), `delta`s of text (`text` as Markdown,
        `plain` as plain text), then `done` with the whole reply (as the JSON answer), or `error`."""
        yield _sse("meta", {"mode": turn.reply.mode, "searched_for": turn.query if turn.rewritten else None})
        try:
            # A generated reply that falls back to quoting has shown nothing before: its one delta is the quote.
            for delta in self._deltas(turn, settings):
                # A reply that is not generated comes in one delta, the whole text: its plain form is whole too.
                plain = delta if turn.reply.mode == "generative" else turn.reply.plain_text
                yield _sse("delta", {"text": delta, "plain": plain})
            yield _sse("done", self._finished(turn, settings, started, base, source))
        except AnswerRefused as exc:
            yield _sse("error", {"error": str(exc), "status": 503})
        except AnswerStopped as exc:
            yield _sse("error", {"error": f"The answer was stopped: {exc}", "status": 503})
        except KNOWN as exc:
            log.warning("api: answer failed: %s", exc)
            yield _sse("error", {"error": "The answer could not be finished.", "status": 503})


@functools.cache
def _widget_script() -> str:
    """The widget's script, read from the package once per process."""
    return resources.files("core.serve").joinpath("widget.js").read_text(encoding="utf-8")


async def widget(request: Request) -> Response:
    return Response(_widget_script(), media_type="text/javascript",
                    headers={"Cache-Control": "public, max-age=300"})  # fmt: skip


def _base(request: Request) -> str:
    """Inkwell's own address as this request reached it (the root, not the API's mount)."""
    return str(request.url.replace(path="/", query="", fragment=""))


def _same_origin(request: Request, origin: str) -> bool:
    """Whether `origin` is the API's own (a page of this server calling it)."""
    host = request.headers.get("host", "")
    return origin.split("://", 1)[-1] == host


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.message, exc.headers)


async def _known_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, AnswerRefused):
        return error_response(503, str(exc), {"Retry-After": "30"})
    if isinstance(exc, AnswerStopped):
        return error_response(503, f"The answer was stopped: {exc}")
    log.warning("api: %s %s failed: %s", request.method, request.url.path, exc)
    return error_response(503, "Inkwell could not answer just now; please try again later.")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    messages = {404: "There is no such API address.", 405: "This API address does not take that method."}
    return error_response(exc.status_code, messages.get(exc.status_code, str(exc.detail)), exc.headers)


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("api: %s %s failed", request.method, request.url.path)
    return error_response(500, "Something went wrong on the server.")


class _JsonCors(CORSMiddleware):
    """CORS for the owner's listed origins, whose refused preflight answers in JSON like every other error
    (Starlette's says "Disallowed CORS origin" in plain text)."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code == 200:
            return response
        headers = {k: v for k, v in response.headers.items() if k not in ("content-length", "content-type")}
        if b"origin" in bytes(response.body):
            return error_response(403, ORIGIN_REFUSED, headers)
        return error_response(
            400, "The API takes GET and POST with Content-Type and Accept headers.", headers
        )


class _SlashFree:
    """Routes `/api/ask/` as `/api/ask`: every API address answers the same with or without trailing
    slashes. Starlette's router would answer 307 to the slash-free address instead, which a browser's
    `fetch` follows but `curl` without -L and many blog plugins do not (their POST was lost). Rewriting
    the path before routing covers every route, present and future, and leaves the OpenAPI paths alone."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"] if scope["type"] == "http" else ""
        trimmed = path.rstrip("/")
        # Never down to the mount itself: "/api/" stays the 404 it was.
        if trimmed != path and len(trimmed) > len(scope.get("root_path", "")):
            scope = {**scope, "path": trimmed}
        await self.app(scope, receive, send)


def api_app(settings_source: Callable[[], Settings]) -> Starlette:
    """The API as a Starlette app (mounted at /api), with CORS for the owner's listed origins; each
    address answers with or without trailing slashes (never a redirect)."""
    api = Api(settings_source)
    try:
        origins = settings_source().allowed_origin_list
    except ConfigError:  # every request says what is wrong (500 with the message)
        origins = []
    handlers: dict[Any, Callable] = {ApiError: _api_error, HTTPException: _http_error, Exception: _unexpected}
    handlers.update({kind: _known_error for kind in (*KNOWN, AnswerRefused, AnswerStopped)})
    app = Starlette(
        routes=[
            Route("/ask", api.ask, methods=["POST"]),
            Route("/search", api.search, methods=["GET"]),
            Route("/feedback", api.feedback, methods=["POST"]),
            Route("/health", api.health, methods=["GET"]),
            Route("/welcome", api.welcome, methods=["GET"]),
            Route("/openapi.json", lambda request: JSONResponse(OPENAPI), methods=["GET"]),
        ],
        middleware=[
            Middleware(
                _JsonCors,
                allow_origins=origins,
                allow_methods=["GET", "POST"],
                allow_headers=["Content-Type", "Accept"],
                max_age=600,
            ),
            Middleware(_SlashFree),
        ],
        exception_handlers=handlers,
    )
    app.router.redirect_slashes = False  # an unknown address is the JSON 404, not a redirect to guess at
    return app


def routes(settings_source: Callable[[], Settings]) -> list[BaseRoute]:
    """The routes to serve beside the Streamlit app: the API under /api and the widget's script."""
    return [Mount("/api", app=api_app(settings_source)), Route("/widget.js", widget, methods=["GET"])]
