"""Keywords chosen by an LLM: 1–6 per chunk, with the whole post in view, in one request per post.

The request shows the post as its chunks, numbered `[C1]`, `[C2]`, … (together they are the whole post,
so it is sent once), and asks for `{"chunks": [{"id": 1, "keywords": ["…"]}, …]}`. When the post's
chunks don't fit the model's input budget (tiktoken count), they are sent in as few consecutive
batches as fit.

Every keyword is cleaned the way the built-in extractor would have it: lowercase, at most four words,
plural nouns made singular (English: only plurals are reduced, as in core/chunk/keywords.py), no stopwords,
no vague words (core.chunk.keywords.VAGUE_WORDS), no duplicates, at most six. A chunk left with none (missing
from the reply, or only vague words) gets the built-in keywords instead, and the caller says so.
"""

from __future__ import annotations

import contextlib
import re

from core.chunk import STOPWORDS
from core.chunk.keywords import MAX_KEYWORD_CHARS, MAX_KEYWORD_WORDS, MAX_KEYWORDS, VAGUE_WORDS, _lemmatize
from core.models import Chunk
from core.text import count_tokens, language_name

MAX_WORDS = MAX_KEYWORD_WORDS
_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")
_NOT_A_WORD = re.compile(r"[cs]?\d+|keyword|.*[<>…].*")  # chunk/sentence markers, numbers, placeholders

SYSTEM = (
    "You choose search keywords for the chunks of one blog post. The whole post is given as its chunks, "
    "numbered [C1], [C2], …. For each chunk give 1 to 6 keywords: specific nouns or short noun phrases "
    "(1–3 words) that say what that chunk is about and set it apart from the other chunks; names of "
    "people, places, works, tools and techniques are good keywords. Singular, lowercase, in "
    "{language}. No vague words (thing, way, people, time, idea, life, part, kind, good, new, …), no "
    "verbs, no words only from the title. Reply with JSON only: "
    '{{"chunks": [{{"id": <chunk number>, "keywords": ["<keyword>", …]}}, …]}}, one entry per chunk.'
)

SCHEMA = {
    "type": "object",
    "properties": {
        "chunks": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "keywords": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["id", "keywords"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["chunks"],
    "additionalProperties": False,
}


def system_prompt(lang: str) -> str:
    return SYSTEM.format(language=language_name(lang if lang != "und" else None))


def user_prompt(title: str, chunks: list[Chunk], ids: list[int]) -> str:
    parts = [f"Title: {title}"]
    for i in ids:
        chunk = chunks[i]
        head = f"[C{i + 1}]" + (f" (section: {chunk.section})" if chunk.section else "")
        parts.append(f"{head}\n{chunk.text}")
    return "\n\n".join(parts)


def batches(title: str, chunks: list[Chunk], budget: int, system: str) -> list[list[int]]:
    """Chunk indexes grouped into requests that fit `budget` prompt tokens: one group when the post fits."""
    fixed = count_tokens(system) + count_tokens(f"Title: {title}") + 16
    groups: list[list[int]] = [[]]
    used = fixed
    for i, chunk in enumerate(chunks):
        cost = count_tokens(chunk.text) + count_tokens(chunk.section) + 12
        if groups[-1] and used + cost > budget:
            groups.append([])
            used = fixed
        groups[-1].append(i)
        used += cost
    return groups


def max_reply_tokens(n_chunks: int) -> int:
    return 32 + 48 * n_chunks


def parse_reply(value: object) -> dict[int, list]:
    """{chunk index (0-based): raw keyword list} from the model's JSON; unknown shapes give {}."""
    items = value.get("chunks") if isinstance(value, dict) else value
    found: dict[int, list] = {}
    if not isinstance(items, list):
        return found
    for position, item in enumerate(items, start=1):
        if isinstance(item, dict):
            raw_id, words = item.get("id", position), item.get("keywords")
        elif isinstance(item, list):
            raw_id, words = position, item
        else:
            continue
        if isinstance(raw_id, str):
            raw_id = raw_id.strip().lstrip("Cc")
        try:
            index = int(raw_id) - 1  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        if isinstance(words, list) and index not in found:
            found[index] = words
    return found


def clean_keywords(words: list, lang: str = "en") -> list[str]:
    """Lowercase, singular, specific keywords: at most MAX_KEYWORDS, duplicates and vague words dropped."""
    out: list[str] = []
    code = lang if lang not in ("", "und") else "en"
    for word in words:
        if not isinstance(word, str):
            continue
        parts = [_PUNCT.sub("", p) for p in word.replace("_", " ").split()]
        parts = [p for p in parts if p]
        if not parts or len(parts) > MAX_WORDS or len(" ".join(parts)) > MAX_KEYWORD_CHARS:
            continue
        lowered = [p.lower() for p in parts]
        if all(p in STOPWORDS or p in VAGUE_WORDS for p in lowered):
            continue
        if any(_NOT_A_WORD.fullmatch(p) for p in lowered):  # "c2", "s14", "2019", "<keyword>"
            continue
        if len(parts) == 1 and (len(lowered[0]) < 3 and not parts[0].isupper()):
            continue
        last = lowered[-1]
        with contextlib.suppress(ValueError, KeyError):  # a language simplemma does not know
            lowered[-1] = _lemmatize(parts[-1], last, code) or last  # the head noun, singular
        term = " ".join(lowered)
        if term not in out:
            out.append(term)
        if len(out) == MAX_KEYWORDS:
            break
    return out
