"""Cut posts into chunks for embedding and retrieval.

Two strategies (settings.chunk_strategy):

* "paragraph" (default): sizes are counted in tiktoken o200k_base tokens. Consecutive paragraphs are
  merged while the chunk stays within settings.chunk_tokens. A paragraph longer than that is cut at
  sentence boundaries into pieces of similar size, each within the target; a single sentence longer
  than the target is cut between words (and a word longer than the target between tokens). Headings
  are not chunk text: each one becomes the `section` of the chunks after it and always starts a new
  chunk. A section's last chunk is folded into the one before when it is under 20% of the target and
  the two together stay within 120% of it, so answers do not cite stubs; that merge is the only way
  a chunk exceeds the target (apart from a single `[REF: …]`/`[IMAGE: …]` tag longer than the
  target, which is never cut).
* "fixed": the seed's strategy, windows of settings.fixed_chars characters overlapping by
  settings.fixed_overlap, cut at whitespace when possible and never inside a tag.
"""

from __future__ import annotations

from core.chunk.fixed import fixed_with_sections
from core.chunk.paragraph import paragraph_chunks
from core.config import Settings
from core.models import Chunk, Post
from core.text.tokens import count_tokens


def chunk_post(post: Post, settings: Settings) -> list[Chunk]:
    """Chunks of one post: the imported ones as they are, else cut by settings.chunk_strategy."""
    if post.prechunked is not None:
        return [
            Chunk(
                chunk_id=pre.chunk_id or chunk_id(post.post_id, i),
                post_id=post.post_id,
                index=i,
                text=pre.text,
                section=pre.section,
                tokens=count_tokens(pre.text),
                keywords=list(pre.keywords),
            )
            for i, pre in enumerate(post.prechunked)
        ]
    if settings.chunk_strategy == "fixed":
        pieces = fixed_with_sections(post.blocks, settings.fixed_chars, settings.fixed_overlap)
    else:
        pieces = paragraph_chunks(post.blocks, settings.chunk_tokens)
    return [
        Chunk(
            chunk_id=chunk_id(post.post_id, i),
            post_id=post.post_id,
            index=i,
            text=text,
            section=section,
            tokens=count_tokens(text),
        )
        for i, (section, text) in enumerate(pieces)
    ]


def chunk_id(post_id: str, index: int) -> str:
    return f"{post_id}#{index:04d}"
