"""The corpus's main language, kept with the posts table (metadata of its `post_id` field), so every
process reading the table, a replica on object storage included, translates questions into the same
language. Written at ingest (core/ingest/pipeline.py) from the posts' detected languages.

    write_corpus_language(store, "fr")
    corpus_language(store, settings.local_home)   # "fr"; a table from before this: the local record
"""

from __future__ import annotations

import logging
from pathlib import Path

from core.llm.cache import corpus_language as recorded_language
from core.store.commit import retry_commit
from core.store.schema import META_LANGUAGE, POSTS
from core.store.tables import Store

_log = logging.getLogger(__name__)


def table_language(store: Store) -> str | None:
    """The language stored with the posts table; None when there is no table or it holds none."""
    table = store._open(POSTS)
    if table is None:
        return None
    value = (table.schema.field("post_id").metadata or {}).get(META_LANGUAGE)
    return value.decode() if value else None


def write_corpus_language(store: Store, language: str | None) -> None:
    """Store `language` (ISO 639-1) with the posts table, or remove it (None): one commit, skipped when
    the table already says so."""
    if table_language(store) == language:
        return
    retry_commit(
        "record the corpus language",
        lambda: store.posts.update_field_metadata(
            {"path": "post_id", "metadata": {META_LANGUAGE.decode(): language}}
        ),
    )


def corpus_language(store: Store, local_home: str | Path) -> str | None:
    """The corpus's main language: the posts table's; for a table written before it kept one, the
    record of this machine's last ingest (None when neither has one). A table that cannot be read
    counts as holding none."""
    try:
        stored = table_language(store)
    except Exception as exc:  # the question is still answered, in the local record's language
        _log.warning("could not read the corpus language from the posts table: %s", exc)
        stored = None
    return stored or recorded_language(local_home)
