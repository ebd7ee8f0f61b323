"""What the static site's page searches and quotes from, computed once at export time.

    corpus = read_corpus(store)                 # chunks with their vectors and posts' addresses
    index, blobs = build_index(corpus, embedder, settings)

`index` (JSON) holds the chunks (text, post, title, section, keywords, address) with each chunk's
sentence units (offset, length, flags readable/signpost/lends back/leans back/takes up the one before, read in
the chunk's language: core/answer/quotable.py's split, done here so the page never splits sentences), BM25 statistics of the keyword side (the same tokens as LanceDB's
full-text index: checked against its scores by tests/integration/test_static_export.py), the words the relevance bar
reads (a lemma table for the corpus's words and their inflections, compound heads, stop and function
words, language hints) and every constant of the rules. `blobs` are the vectors, int8 with one float32
scale per vector: the chunks' (dense search), and those of every sentence an answer may quote and of
every chunk heading (core/answer/extractive.py embeds these per question; here they are embedded once).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.answer.abstain import (
    CHECKED_HITS,
    MIN_HEAD_CHARS,
    MIN_MODIFIER_CHARS,
    NO_ANSWER_MESSAGE,
    SUGGESTIONS,
    thresholds_for,
)
from core.answer.extractive import (
    MAX_CANDIDATES,
    MAX_HITS,
    MAX_WORDS,
    heading_text,
    is_signpost,
)
from core.answer.near_words import MIN_CHARS, passage_words
from core.answer.question import FOLLOWUP_CONTENT_WORDS
from core.answer.quotable import lends_back, readable, sentence_units
from core.answer.reply import CANNOT_READ, CANNOT_READ_OTHER, CLOSEST, NO_ANSWER, decline_replies
from core.chunk import STOPWORDS
from core.config import Settings
from core.embed import Embedder, relevance_scale
from core.profiles import Bar, profile_for
from core.search.retrieve import DENSE_WEIGHT
from core.search.route import ROUTE_MARGIN
from core.store import Store
from core.text import LANGUAGE_NAMES, UNDETERMINED, detect_language, function_words
from core.text.labels import LABELS
from core.text.languages import LANGUAGES, SHORT_RECORDS, UNKNOWN, language
from core.text.words import ELIDED_PREFIXES, LIGHT_STOPWORDS, QUESTION_FILLER, WORD, is_known_word
from core.text.words import lemma as lemma_of

FORMAT = 3  # 2: word vectors and follow-up cues; 3: units flag leaning back and taking up, per language
EMBED_BATCH = 64
MAIN_LANGUAGE_CHUNKS = 50  # chunks read to tell the corpus's language (the detector reads 2,000 characters)
# LanceDB 0.40's English stop words for FTS(language="English", remove_stop_words=True), removed before
# stemming; found by querying its index word by word (a stop word matches nothing). With them, the
# BM25 scores below equal LanceDB's to 1e-5 on the demo questions (tests/integration/test_static_export.py).
_FTS_STOP_LIST = (
    "a about after again against all am an and are as at be been being below between both but by can d did "
    "didn do doesn doing don down each few for from further had has have haven having he her here hers "
    "herself him himself his how i if in into is isn it its itself just ll m me more most mostly my myself "
    "no nor not now of off on or other others ought our ours ourselves out over own re s same she should "
    "so some such t than that the their theirs them themselves then there these they this those through to "
    "too under until up ve was we were what when where which while who whom will willing with won wouldn "
    "you your yours yourself yourselves"
)
FTS_STOP_WORDS = frozenset(_FTS_STOP_LIST.split())
FTS_MAX_TOKEN = 40  # LanceDB drops longer tokens
BM25_K1 = 1.2
BM25_B = 0.75
_TOKEN = re.compile(r"[^\W_]+")


@dataclass
class Corpus:
    model_id: str
    chunks: list[dict]  # chunk rows (post order), each with "url" from its post
    vectors: np.ndarray  # (chunks, dim) float32, unit length


def read_corpus(store: Store) -> Corpus:
    """Every chunk of a stored post (orphans left out), in post order, with its post's address."""
    table = store.chunks
    model_id = store.model_id()
    if table is None or model_id is None or table.count_rows() == 0:
        raise ValueError("nothing to export: the table holds no chunks (ingest posts first)")
    urls = post_urls(store)
    columns = ["chunk_id", "post_id", "idx", "title", "collection", "date", "section", "text", "keywords"]
    rows = [r for r in store.list_chunks(columns=[*columns, "vector"]) if r["post_id"] in urls]
    vectors = np.asarray([r.pop("vector") for r in rows], dtype=np.float32)
    for row in rows:
        row["url"] = urls[row["post_id"]]
    return Corpus(model_id, rows, vectors)


def post_urls(store: Store) -> dict[str, str]:
    """post id → the post's web address: the posts table's `url` column, "" where it has none."""
    table = store.posts
    columns = ["post_id", "url"] if "url" in table.schema.names else ["post_id"]
    rows = table.search().select(columns).limit(max(table.count_rows(), 1)).to_arrow().to_pylist()
    return {r["post_id"]: (r.get("url") or "") for r in rows}


# Vectors -----------------------------------------------------------------------------------------------


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows and one float32 scale per row (row ≈ int8 × scale; max |value| maps to 127)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.size == 0:
        return np.zeros(vectors.shape, np.int8), np.zeros(len(vectors), np.float32)
    peak = np.abs(vectors).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.round(vectors / scales[:, None]).clip(-127, 127).astype(np.int8), scales


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _embed_all(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    parts = [embedder.embed(list(texts[i : i + EMBED_BATCH])) for i in range(0, len(texts), EMBED_BATCH)]
    return np.vstack(parts) if parts else np.zeros((0, 0), np.float32)


# Keyword side ------------------------------------------------------------------------------------------


def fold(token: str) -> str:
    """ASCII folding as LanceDB's tokenizer does it, for the letters a decomposition reaches."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", token) if not unicodedata.combining(c))
    return folded or token


def fts_tokens(text: str, stem: object) -> list[str]:
    """LanceDB's full-text tokens: split on what is not a letter or digit, lower case, ASCII-folded,
    stop words and long tokens dropped, Snowball-stemmed."""
    out = []
    for raw in _TOKEN.findall(text):
        token = fold(raw.lower())
        if len(token) > FTS_MAX_TOKEN or token in FTS_STOP_WORDS:
            continue
        out.append(stem(token))  # type: ignore[operator]
    return out


def bm25_index(chunks: Sequence[dict]) -> dict:
    """Postings (term → [[chunk, tf], …]), document lengths and the BM25 constants."""
    from core.text import stemmer_for

    stem = stemmer_for("en")
    postings: dict[str, list[list[int]]] = {}
    lengths = []
    for n, chunk in enumerate(chunks):
        search_text = " ".join(
            p
            for p in (chunk["title"], chunk["section"], chunk["text"], " ".join(chunk["keywords"] or []))
            if p
        )
        tokens = fts_tokens(search_text, stem)
        lengths.append(len(tokens))
        for term, tf in Counter(tokens).items():
            postings.setdefault(term, []).append([n, tf])
    return {"k1": BM25_K1, "b": BM25_B, "lengths": lengths, "postings": postings}


# Words the relevance bar reads ---------------------------------------------------------------------


def lexicon(chunks: Sequence[dict]) -> dict:
    """Lemmas for the corpus's words and their inflections, compound heads, word lists."""
    from simplemma.strategies.dictionaries import DefaultDictionaryFactory

    from core.text.function_words import FREQUENT_WORDS
    from core.text.language import _LETTER_HINTS

    texts = [
        " ".join((c["title"] or "", c["section"] or "", c["text"] or "", " ".join(c["keywords"] or [])))
        for c in chunks
    ]
    forms = {w.lower() for text in texts for w in WORD.findall(text)}
    words = {f.removesuffix("'s").removesuffix("’s") for f in forms}
    lemmas = {w: lemma_of(w) for w in words if len(w) > 1}
    targets = set(lemmas.values()) | STOPWORDS | LIGHT_STOPWORDS
    # Inflections of the corpus's lemmas and of stop words: a question's "went" is "go", a stop word.
    dictionary = DefaultDictionaryFactory().get_dictionary("en")
    for key, value in dictionary.items():
        word = (key.decode() if isinstance(key, bytes) else key).lower()
        lemma = (value.decode() if isinstance(value, bytes) else value).lower()
        if lemma in targets and word not in lemmas:
            lemmas[word] = lemma_of(word)
    heads: dict[str, list[list]] = {}
    for form in forms:
        for cut in range(MIN_MODIFIER_CHARS, len(form) - MIN_HEAD_CHARS + 1):
            prefix = form[:cut].rstrip("-")
            known = is_known_word(prefix, "en")
            if known or prefix in forms:
                heads.setdefault(form, []).append([form[cut:], prefix, known])
    return {
        "lemmas": {w: lemma for w, lemma in lemmas.items() if lemma != w},
        "stopwords": sorted(STOPWORDS),
        "light_stopwords": sorted(LIGHT_STOPWORDS),
        "filler": sorted(QUESTION_FILLER),
        "heads": heads,
        "language_words": {lang: sorted(ws) for lang, ws in FREQUENT_WORDS.items()},
        "letter_hints": {k: list(v) for k, v in _LETTER_HINTS.items()},
        "function_words": {lang: sorted(function_words(lang)) for lang in LANGUAGE_NAMES},
        "elided": list(ELIDED_PREFIXES),
        "third_person": {
            code: list(lang.third_person)
            for code, lang in (*LANGUAGES.items(), (UNKNOWN.code, UNKNOWN))
            if lang.third_person
        },
        "followup": followup_cues(),
    }


def followup_cues() -> dict:
    """What the page needs to tell a follow-up as core/answer/question.py does: each language's cues
    ("und" for a question too short to tell), and how many content words a pointer joins."""
    return {
        "cues": {
            code: {
                "referring": sorted(lang.referring),
                "continuations": list(lang.continuations),
                "more_requests": sorted(lang.more_requests),
                "question_words": sorted(lang.question_words),
            }
            for code, lang in (*LANGUAGES.items(), *SHORT_RECORDS.items(), (UNKNOWN.code, UNKNOWN))
        },
        "content_words": FOLLOWUP_CONTENT_WORDS,
    }


# A sentence unit's flags: what the page's passage rules read (extractive.py `_passage`, `_lenders`).
READABLE, SIGNPOST, LENDS, LEANS_BACK, TAKES_UP = 1, 2, 4, 8, 16


def unit_flags(body: str, main_language: str) -> list[tuple[int, str, int]]:
    """(start, text, flags) of each sentence unit of a chunk, read in the chunk's language (in
    `main_language`, the corpus's, when the chunk is too short to tell: `chunk_languages`): readable,
    a signpost, lends back, leans back on the unit before, takes up a word of the unit before."""
    code = detect_language(body)
    lang = language(main_language if code == UNDETERMINED else code)
    out = []
    before = ""
    for start, text in sentence_units(body):
        flags = (
            READABLE * readable(text)
            | SIGNPOST * is_signpost(text, lang)
            | LENDS * lends_back(text)
            | LEANS_BACK * lang.leans_back(text)
            | TAKES_UP * (bool(before) and lang.takes_up(text, before))
        )
        out.append((start, text, flags))
        before = text
    return out


# The whole index --------------------------------------------------------------------------------------


def build_index(
    corpus: Corpus, embedder: Embedder, settings: Settings, bar: Bar | None = None
) -> tuple[dict, dict[str, bytes]]:
    """The page's index (JSON-ready) and its binary files by name; `bar` is the relevance bar on the
    table's floor (core/search/floor.py; None: the model profile's as it is)."""
    sentences: dict[str, int] = {}
    headings: dict[str, int] = {}
    chunks = []
    # A chunk too short to tell its language is read in the corpus's (extractive.py `chunk_languages`).
    main = detect_language(" ".join(row["text"] or "" for row in corpus.chunks[:MAIN_LANGUAGE_CHUNKS]))
    for row in corpus.chunks:
        units = []
        body = row["text"] or ""
        for start, text, flags in unit_flags(body, main):
            vector = (
                sentences.setdefault(text, len(sentences)) if flags & (READABLE | SIGNPOST | LENDS) else -1
            )
            # Offsets in UTF-16 code units, as JavaScript strings count them (an emoji is two).
            units.append([utf16_len(body[:start]), utf16_len(text), flags, vector])
        heading = heading_text(row["title"] or "", row["section"] or "")
        chunks.append(
            {
                "id": row["chunk_id"],
                "post": row["post_id"],
                "title": row["title"] or row["post_id"],
                "collection": row["collection"] or "",
                "date": row["date"] or "",
                "section": row["section"] or "",
                "text": row["text"] or "",
                "keywords": list(row["keywords"] or []),
                "url": row["url"],
                "heading": headings.setdefault(heading, len(headings)),
                "units": units,
            }
        )
    sentence_vectors = _embed_all(embedder, list(sentences))
    heading_vectors = _embed_all(embedder, list(headings))
    # Every word the bar may compare a question's missing word with (core/answer/near_words.py), each
    # embedded alone: the page embeds only the missing words themselves.
    words = passage_words(
        " ".join((c["title"] or "", c["section"] or "", c["text"] or "")) for c in corpus.chunks
    )
    word_ints, word_scales = quantize(_embed_all(embedder, words))
    parts = [corpus.vectors, sentence_vectors, heading_vectors]
    dim = corpus.vectors.shape[1]
    matrix = np.vstack([p.reshape(-1, dim) for p in parts])
    ints, scales = quantize(matrix)
    index = {
        "format": FORMAT,
        "model_id": corpus.model_id,
        "dim": dim,
        "counts": {
            "chunks": len(chunks),
            "sentences": len(sentences),
            "headings": len(headings),
            "words": len(words),
        },
        "settings": _settings(settings),
        "rules": _rules(corpus.model_id, bar, decline_replies(settings)),
        "chunks": chunks,
        "bm25": bm25_index(corpus.chunks),
        "lexicon": lexicon(corpus.chunks),
        # The reader's fixed words per language, and the blog's language for them before a question.
        "language": main,
        "labels": LABELS,
    }
    # The words are fetched only when a missing word's decision needs them: the first load stays small.
    return index, {
        "vectors.i8": ints.tobytes(),
        "scales.f32": scales.astype("<f4").tobytes(),
        "words.json": json.dumps(words, ensure_ascii=False, separators=(",", ":")).encode(),
        "words.i8": word_ints.tobytes(),
        "words.f32": word_scales.astype("<f4").tobytes(),
    }


def _settings(settings: Settings) -> dict:
    return {
        "top_k": settings.top_k,
        "threshold": settings.threshold,
        "min_chunks": settings.min_chunks,
        "max_chunks": settings.max_chunks,
        "mode": settings.retrieval_mode,
        "fusion": settings.fusion,
        "rrf_k": settings.rrf_k,
        "routing": settings.routing,
        "max_question_chars": settings.max_question_chars,
    }


def _rules(model_id: str, bar: Bar | None = None, declines: dict[str, str] | None = None) -> dict:
    """The constants of core/answer and core/search that the page's port of them needs."""
    bar = bar or thresholds_for(model_id)
    profile = profile_for(model_id)
    weights = profile.scorer
    return {
        "scale": list(relevance_scale(model_id)),
        "thresholds": {
            "similarity": bar.similarity,
            "supported": bar.supported,
            "max_missing": bar.max_missing,
            "max_missing_close": bar.max_missing_close,
            "cross_language": bar.cross_language,
            "word_match": bar.word_match,
        },
        "dense_weight": DENSE_WEIGHT,
        "route_margin": ROUTE_MARGIN,
        "max_hits": MAX_HITS,
        "max_candidates": MAX_CANDIDATES,
        "max_words": MAX_WORDS,
        "weights": {
            "similarity": weights.similarity,
            "heading": weights.heading,
            "coverage": weights.coverage,
            "coverage_light": weights.coverage_light,
            "hit": weights.hit,
            "length": weights.length,
            "question": weights.question,
        },
        "near_duplicate": profile.passage.near_duplicate,
        "second_post_gap": profile.passage.second_post_gap,
        "checked_hits": CHECKED_HITS,
        "suggestions": SUGGESTIONS,
        "min_head_chars": MIN_HEAD_CHARS,
        "min_word_chars": MIN_CHARS,
        "min_modifier_chars": MIN_MODIFIER_CHARS,
        # the owner's decline text in its language, as the server replies (reply.py `decline_replies`)
        "no_answer": declines or {**NO_ANSWER, "en": NO_ANSWER_MESSAGE},
        "cannot_read": CANNOT_READ,
        "cannot_read_other": CANNOT_READ_OTHER,
        "closest": CLOSEST,
    }
