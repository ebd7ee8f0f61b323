"""Token counting with tiktoken, using the vocabulary files that ship in data/tiktoken/.

tiktoken downloads its vocabularies on first use; offline machines cannot, so we point its cache at
the copies in the repo unless the user already chose a cache directory.
"""

from __future__ import annotations

import bisect
import os
from functools import lru_cache
from pathlib import Path

import numpy as np
import tiktoken

VOCAB_DIR = Path(__file__).resolve().parents[2] / "data" / "tiktoken"
DEFAULT_ENCODING = "o200k_base"


@lru_cache(maxsize=4)
def encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(VOCAB_DIR))
    return tiktoken.get_encoding(name)


def count_tokens(text: str, name: str = DEFAULT_ENCODING) -> int:
    return len(encoding(name).encode(text, disallowed_special=()))


class SliceCounter:
    """Token counts of many slices of one long text, from a single encoding of it.

    Counting each slice with `count_tokens` re-encodes it, and the chunker asks about thousands of
    overlapping slices of a long paragraph (quadratic: 45 s for a 2 MB paragraph). Here the text is
    encoded once, and a slice's count is estimated as the number of the text's tokens that overlap it.
    That differs from the slice's own count only where a token straddles its ends (" Word" in the text,
    "Word" alone): by -1 to +3 on 46k slices of the demo posts and SciFact (tests/unit/test_chunk.py checks
    it). `decisive` returns the estimate when it is farther than SLACK from every limit it will be
    compared with, so each comparison comes out as with the exact count, and counts exactly near a
    limit, incrementally when the slice grows from the last one counted (see `exact`).
    """

    SLACK = 4

    def __init__(self, text: str, name: str = DEFAULT_ENCODING):
        self.text = text
        self.name = name
        self._tokens: list[int] | None = encoding(name).encode(text, disallowed_special=())
        self.total = len(self._tokens)  # = count_tokens(text)
        self._starts: list[int] | None = None
        self._last = (-1, -1, 0)  # (a, b, exact count of text[a:b]) of the last exact count

    @property
    def starts(self) -> list[int]:
        """Where each token of the text starts (computed on first use: a short text needs only `total`)."""
        if self._starts is None:
            self._starts = token_starts(self.text, self.name, self._tokens)
            self._tokens = None
        return self._starts

    def estimate(self, a: int, b: int) -> int:
        """Tokens of the whole text's encoding that overlap text[a:b]."""
        if b <= a:
            return 0
        return bisect.bisect_left(self.starts, b) - bisect.bisect_right(self.starts, a) + 1

    def bounds(self, spans: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
        """(first, end) token index per span: estimate(span i's start, span j's end) = end[j] - first[i]."""
        starts = np.asarray(self.starts, dtype=np.int64)
        a = np.fromiter((s[0] for s in spans), np.int64, len(spans))
        b = np.fromiter((s[1] for s in spans), np.int64, len(spans))
        return (np.searchsorted(starts, a, "right") - 1).tolist(), np.searchsorted(starts, b, "left").tolist()

    def exact(self, a: int, b: int) -> int:
        """count_tokens(text[a:b]). When the last slice counted was text[a:c] with c < b and a space
        after a non-space at c, only text[c:b] is encoded: tiktoken's pre-tokenizer (o200k, cl100k)
        always splits there (words take the space before them, never the one after), so counts add."""
        la, lb, ln = self._last
        text = self.text
        if la == a and lb == b:
            return ln
        if la == a and a < lb < b and text[lb] == " " and not text[lb - 1].isspace():
            n = ln + count_tokens(text[lb:b], self.name)
        else:
            n = count_tokens(text[a:b], self.name)
        self._last = (a, b, n)
        return n

    def decisive(self, a: int, b: int, limit: float, estimate: int | None = None) -> int:
        """A count of text[a:b] that compares with `limit` as the exact count does."""
        n = self.estimate(a, b) if estimate is None else estimate
        return self.exact(a, b) if abs(n - limit) <= self.SLACK else n


def token_starts(text: str, name: str = DEFAULT_ENCODING, tokens: list[int] | None = None) -> list[int]:
    """The character offset where each token of `text` (its encoding: `tokens`) starts, as tiktoken's
    decode_with_offsets gives them (vectorised: that one loops over every byte in Python)."""
    if tokens is None:
        tokens = encoding(name).encode(text, disallowed_special=())
    ids = np.asarray(tokens, dtype=np.int64)
    if not len(ids):
        return []
    chars, continues = _token_chars(name)
    ends = np.cumsum(chars[ids])
    starts = np.concatenate(([0], ends[:-1])) - continues[ids]
    return np.maximum(starts, 0).tolist()


@lru_cache(maxsize=2)
def _token_chars(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Per token id: how many characters start in its bytes, and whether its first byte continues a
    character begun by the token before."""
    ranks = encoding(name)._mergeable_ranks  # bytes -> token id, every ordinary token
    size = max(ranks.values()) + 1
    values = [b""] * size
    for data, token in ranks.items():
        values[token] = data
    lengths = np.fromiter((len(v) for v in values), np.int64, size)
    blob = np.frombuffer(b"".join(values), dtype=np.uint8)
    continuation = (blob & 0xC0) == 0x80
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    chars = np.add.reduceat(~continuation, offsets).astype(np.int64) * (lengths > 0)
    first = continuation[np.minimum(offsets, len(blob) - 1)].astype(np.int64) * (lengths > 0)
    # Special tokens are never produced (text that looks like one is encoded as ordinary text).
    return chars, first
