"""Chunks cut by an LLM, accepted only when they are provably the post's own text.

The model sees the post as numbered sentences (core/prepare/rewrite.py) and is asked for the sentence where each
chunk starts: `{"chunk_starts": [1, 6, 14]}`. That answer cannot invent or lose text: chunk k is the
sentences from starts[k] up to the next start, sliced from the post with the author's spacing. Starts
must be sentence numbers of the post; 1 is implied, and every heading starts a chunk (its text becomes
the chunk's `section`), as in the built-in chunker.

Some models answer with the chunk texts instead (`{"chunks": ["…", …]}`). Those are accepted only if
each one is found in the post, in order, modulo whitespace and typographic quotes/dashes (sentence
markers and heading marks the model copied are ignored), and together they cover every character of
the post's paragraphs; otherwise `ChunkValidationError` says why and the caller falls back to the
built-in chunker.

A chunk over OVERSIZE_RATIO × chunk_tokens is re-cut by the built-in paragraph packer, so one runaway
answer cannot produce a chunk too big to embed well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.chunk import chunk_id, paragraph_chunks
from core.models import Block, Chunk
from core.prepare.rewrite import Doc
from core.text import count_tokens

OVERSIZE_RATIO = 1.5


class ChunkValidationError(ValueError):
    """The model's chunks are not usable; the message says why."""


@dataclass
class Piece:
    section: str
    text: str


def parse_chunk_reply(value: object) -> list[int] | list[str]:
    """Chunk starts (ints) or chunk texts (strings) from the model's JSON."""
    if isinstance(value, dict):
        for name in ("chunk_starts", "starts", "chunks"):
            if name in value:
                value = value[name]
                break
        else:
            raise ChunkValidationError("the reply has no chunk_starts")
    if not isinstance(value, list) or not value:
        raise ChunkValidationError("the reply has no chunks")
    starts: list[int] = []
    texts: list[str] = []
    for item in value:
        if isinstance(item, dict):
            item = item.get("start", item.get("first", item.get("text")))
        if isinstance(item, bool):
            raise ChunkValidationError("a chunk start is not a number")
        if isinstance(item, int):
            starts.append(item)
        elif isinstance(item, str) and re.fullmatch(r"\s*[Ss]?\d+\s*", item):
            starts.append(int(item.strip().lstrip("Ss")))
        elif isinstance(item, str):
            texts.append(item)
        else:
            raise ChunkValidationError("a chunk is neither a sentence number nor text")
    if starts and texts:
        raise ChunkValidationError("the chunks mix sentence numbers and text")
    return starts or texts


def _sections(doc: Doc) -> list[str]:
    """The section (last heading before it) of each block."""
    out, current = [], ""
    for block in doc.blocks:
        if block.heading:
            current = block.text
        out.append(current)
    return out


def pieces_from_starts(doc: Doc, starts: list[int]) -> list[Piece]:
    n = len(doc.sentences)
    if n == 0:
        raise ChunkValidationError("the post has no sentences")
    outside = [s for s in starts if not 1 <= s <= n]
    if outside:
        raise ChunkValidationError(f"chunk start {outside[0]} is not a sentence of the post (1–{n})")
    chosen = set(starts) | {1}
    for prev, sentence in zip(doc.sentences, doc.sentences[1:], strict=False):
        if any(doc.blocks[b].heading for b in range(prev.block + 1, sentence.block)):
            chosen.add(sentence.id)  # a heading always starts a chunk
    ordered = sorted(chosen)
    sections = _sections(doc)
    pieces: list[Piece] = []
    for k, first_id in enumerate(ordered):
        last_id = ordered[k + 1] - 1 if k + 1 < len(ordered) else n
        first, last = doc.sentences[first_id - 1], doc.sentences[last_id - 1]
        parts = []
        for b in range(first.block, last.block + 1):
            text = doc.blocks[b].text
            a = first.start if b == first.block else 0
            z = last.end if b == last.block else len(text)
            parts.append(text[a:z].strip())
        pieces.append(Piece(sections[first.block], "\n\n".join(p for p in parts if p)))
    return [p for p in pieces if p.text]


# Text chunks ------------------------------------------------------------------------------------------

_SAME_LENGTH = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "“": '"', "”": '"', "„": '"', "–": "-", "—": "-"})
_MARKER = re.compile(r"\[S\d+\]\s*")
_HEADING_MARK = re.compile(r"(?m)^#+\s+")


def _normalise(text: str) -> tuple[str, list[int]]:
    """Whitespace runs → one space, typography folded; with each kept char's position in `text`."""
    chars: list[str] = []
    where: list[int] = []
    space = False
    for i, ch in enumerate(text.translate(_SAME_LENGTH)):
        if ch.isspace():
            space = True
            continue
        if space and chars:
            chars.append(" ")
            where.append(i - 1)
        space = False
        chars.append(ch)
        where.append(i)
    return "".join(chars), where


def pieces_from_texts(doc: Doc, texts: list[str]) -> list[Piece]:
    stream = "\n\n".join(b.text for b in doc.blocks)
    offsets: list[tuple[int, int]] = []
    pos = 0
    for block in doc.blocks:
        offsets.append((pos, pos + len(block.text)))
        pos += len(block.text) + 2
    # The paragraphs only, normalised, each char mapped to its position in `stream`: a chunk may run
    # over a heading without repeating it.
    norm_parts: list[str] = []
    where: list[int] = []
    for block, (a, _) in zip(doc.blocks, offsets, strict=True):
        if block.heading:
            continue
        text, positions = _normalise(block.text)
        if norm_parts:
            norm_parts.append(" ")
            where.append(a - 1)
        norm_parts.append(text)
        where.extend(a + i for i in positions)
    norm = "".join(norm_parts)
    headings = {b.text.strip() for b in doc.blocks if b.heading}
    spans: list[tuple[int, int]] = []
    search_from = 0
    for k, text in enumerate(texts, start=1):
        lines = _HEADING_MARK.sub("", _MARKER.sub("", text)).split("\n")
        wanted, _ = _normalise("\n".join(line for line in lines if line.strip() not in headings))
        if not wanted:
            continue
        found = norm.find(wanted, search_from)
        if found < 0:
            raise ChunkValidationError(f"chunk {k} is not text of the post ({_short(wanted)})")
        search_from = found
        spans.append((where[found], where[found + len(wanted) - 1] + 1))
    covered = [False] * len(stream)
    for a, b in spans:
        covered[a:b] = [True] * (b - a)
    for block, (a, b) in zip(doc.blocks, offsets, strict=True):
        if block.heading:
            continue
        missing = [i for i in range(a, b) if not covered[i] and not stream[i].isspace()]
        if missing:
            gap = stream[missing[0] : missing[0] + 40]
            raise ChunkValidationError(f"the chunks leave out text of the post ({_short(gap)})")
    sections = _sections(doc)
    pieces: list[Piece] = []
    for a, b in spans:
        current: list[str] = []
        section = ""
        for index, (x, y) in enumerate(offsets):
            lo, hi = max(a, x), min(b, y)
            if lo >= hi:
                continue
            if doc.blocks[index].heading:
                if current:
                    pieces.append(Piece(section, "\n\n".join(current)))
                current, section = [], doc.blocks[index].text
                continue
            if not current:
                section = sections[index]
            part = stream[lo:hi].strip()
            if part:
                current.append(part)
        if current:
            pieces.append(Piece(section, "\n\n".join(current)))
    return pieces


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


# Chunks -----------------------------------------------------------------------------------------------


def split_oversize(pieces: list[Piece], target: int) -> tuple[list[Piece], int]:
    """Pieces over OVERSIZE_RATIO × target re-cut by the built-in packer; returns how many were."""
    out: list[Piece] = []
    split = 0
    for piece in pieces:
        if count_tokens(piece.text) <= OVERSIZE_RATIO * target:
            out.append(piece)
            continue
        split += 1
        blocks = [Block(p) for p in piece.text.split("\n\n") if p.strip()]
        out.extend(Piece(piece.section, text) for _, text in paragraph_chunks(blocks, target))
    return out, split


def to_chunks(post_id: str, pieces: list[Piece]) -> list[Chunk]:
    return [
        Chunk(
            chunk_id=chunk_id(post_id, i),
            post_id=post_id,
            index=i,
            text=piece.text,
            section=piece.section,
            tokens=count_tokens(piece.text),
        )
        for i, piece in enumerate(pieces)
    ]
