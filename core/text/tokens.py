"""Token counting with tiktoken, using the vocabulary files that ship in data/tiktoken/.

tiktoken downloads its vocabularies on first use; offline machines cannot, so we point its cache at
the copies in the repo unless the user already chose a cache directory.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import tiktoken

VOCAB_DIR = Path(__file__).resolve().parents[2] / "data" / "tiktoken"
DEFAULT_ENCODING = "o200k_base"


@lru_cache(maxsize=4)
def encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(VOCAB_DIR))
    return tiktoken.get_encoding(name)


def count_tokens(text: str, name: str = DEFAULT_ENCODING) -> int:
    return len(encoding(name).encode(text, disallowed_special=()))
