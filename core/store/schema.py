"""The tables' schemas, the derived full-text column, SQL quoting and the store's small records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from lancedb.index import FTS
from lancedb.util import value_to_sql

CHUNKS = "chunks"
POSTS = "posts"
META_MODEL = b"inkwell.embed_model"
META_DIM = b"inkwell.embed_dim"
# On the posts table's post_id field: the corpus's main language (core/store/corpus.py).
META_LANGUAGE = b"inkwell.corpus_language"
# Brute-force search is exact and takes a few ms at a few thousand chunks; an ANN index only pays
# off past this size (measured: ≈ 3–9 ms at 2k chunks without one).
VECTOR_INDEX_MIN_ROWS = 10_000
SEARCH_TEXT = "search_text"
# The chunk columns a search hit carries (core.models.Hit).
HIT_COLUMNS = ("chunk_id", "post_id", "title", "collection", "date", "section", "text", "keywords")
# The same fields packed into one derived list<string> column, `[chunk_id, post_id, title, collection,
# date, section, text, *keywords]` (None as ""), which is what searches read: at a million chunks LanceDB
# pays a read per column for every row a search returns (≈ 0.6 ms per column for ten hits), so one
# column instead of eight took a dense search from 12.1 to 7.6 ms p50, and a hybrid one from 35 to 24 ms
# (docs/deployment.md, "A million chunks"). The store computes it on every write, like `search_text`; HIT_SQL adds it
# to a table made before it existed.
HIT = "hit"
HIT_FIELDS = HIT_COLUMNS[:-1]  # then the keywords, as many as there are
HIT_SQL = (
    "array_concat(make_array(chunk_id, post_id, "
    + ", ".join(f"coalesce({f}, '')" for f in HIT_FIELDS[2:])
    + "), keywords)"
)


def hit_columns(table: Any) -> list[str]:
    """HIT_COLUMNS that the table has (a table written by an older Inkwell may lack some)."""
    names = set(table.schema.names)
    return [c for c in HIT_COLUMNS if c in names]


def packed_hit(row: dict) -> list[str]:
    """A chunk row's `hit` column value (see HIT)."""
    return [row.get(f) or "" for f in HIT_FIELDS] + list(row.get("keywords") or [])


def unpacked_hit(values: Sequence[str]) -> dict:
    """The HIT_COLUMNS of a chunk from its `hit` column value."""
    return {**dict(zip(HIT_FIELDS, values, strict=False)), "keywords": list(values[len(HIT_FIELDS) :])}


# The full-text index: lower-cased, ASCII-folded, English stemming and English stop words removed.
# Other languages still match word for word (questions go through the same stemmer), just without
# their own stemming or stop words.
FTS_CONFIG = FTS(language="English", stem=True, remove_stop_words=True, lower_case=True, ascii_folding=True)
# The same concatenation as search_text() in SQL, to add the column to a table made before it existed.
SEARCH_TEXT_SQL = "concat_ws(' ', title, section, text, array_to_string(keywords, ' '))"
# The derived columns and how to compute each from the others in SQL (for tables made before them).
DERIVED_SQL = {SEARCH_TEXT: SEARCH_TEXT_SQL, HIT: HIT_SQL}


class StoreError(RuntimeError):
    """A problem with the data directory or its tables; the message says what to do."""


class ModelMismatchError(StoreError):
    pass


class KeywordSearchError(StoreError):
    """The full-text search failed (e.g. a query LanceDB cannot parse); callers fall back to dense."""


def search_text(
    title: str | None, section: str | None, text: str | None, keywords: Sequence[str] | None
) -> str:
    """What the keyword index sees for a chunk: title, section, text and keywords."""
    parts = [title, section, text, " ".join(keywords or [])]
    return " ".join(p for p in parts if p)


def with_derived(rows: list[dict]) -> list[dict]:
    """Chunk rows with the columns the store derives from the others: `search_text` and `hit`."""
    return [{**row, **derived(row)} for row in rows]


def derived(row: dict) -> dict:
    return {
        SEARCH_TEXT: search_text(row.get("title"), row.get("section"), row.get("text"), row.get("keywords")),
        HIT: packed_hit(row),
    }


def chunks_schema(dim: int, model_id: str) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("post_id", pa.string(), nullable=False),
            pa.field("idx", pa.int32()),
            pa.field("title", pa.string()),
            pa.field("collection", pa.string()),
            pa.field("date", pa.string()),
            pa.field("section", pa.string()),
            pa.field("text", pa.string()),
            pa.field("keywords", pa.list_(pa.string())),
            pa.field("tokens", pa.int32()),
            pa.field("embed_hash", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
            pa.field(SEARCH_TEXT, pa.string()),
            pa.field(HIT, pa.list_(pa.string())),
        ],
        metadata={META_MODEL: model_id.encode(), META_DIM: str(dim).encode()},
    )


POSTS_SCHEMA = pa.schema(
    [
        pa.field("post_id", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("collection", pa.string()),
        pa.field("date", pa.string()),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("source", pa.string()),
        pa.field("format", pa.string()),
        pa.field("raw", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("n_chunks", pa.int32()),
        pa.field("ingested_at", pa.string()),
        # Distinct keyword candidates of the post: corpus document frequencies without re-reading text.
        pa.field("terms", pa.list_(pa.string())),
        # The post's address on the author's blog ("" when unknown). Added after the others: a table made
        # before it gets it on its next write (Store.posts), and reads of such a table give "".
        pa.field("url", pa.string()),
    ]
)
# The posts columns added since the first schema, with the SQL that fills them in an older table.
POSTS_ADDED_SQL = {"url": "CAST('' AS STRING)"}


def sql_str(value: str) -> str:
    """A SQL string literal for LanceDB filters (ids may contain quotes)."""
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"


def sql_values(values: Mapping[str, Any]) -> dict[str, str]:
    """An update's values as SQL, as LanceDB writes them, but an empty list as `make_array()`: its `[]`
    has no element type and the update failed ("concat requires input of at least one array")."""
    return {
        k: "make_array()" if isinstance(v, list) and not v else value_to_sql(v) for k, v in values.items()
    }


@dataclass(frozen=True)
class ModelInfo:
    model_id: str
    dim: int


@dataclass(frozen=True)
class PostState:
    content_hash: str
    recorded: int  # chunks the post row says it has
    stored: int  # chunks actually in the chunks table
    source: str = ""  # the file (or paste, upload) the stored post was read from

    def is_current(self, content_hash: str) -> bool:
        # A count mismatch means an interrupted delete or write: redo the post.
        return self.content_hash == content_hash and self.recorded == self.stored > 0


@dataclass(frozen=True)
class Versions:
    """Table versions before a change, for undo."""

    chunks: int | None
    posts: int | None
