from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.chunk import STOPWORDS, add_keywords, extract_keywords
from core.chunk.keywords import VAGUE_WORDS, document_frequencies
from core.models import Block, Chunk, Post, PreChunk
from tests.conftest import ROOT


def make_post(texts: list[str], post_id: str = "p1", title: str = "Notes") -> tuple[Post, list[Chunk]]:
    post = Post(post_id=post_id, title=title, blocks=[Block(t) for t in texts], raw="", source="t.md")
    chunks = [Chunk(f"{post_id}#{i:04d}", post_id, i, t) for i, t in enumerate(texts)]
    return post, chunks


GARDEN_POST = [
    "The garden was overgrown when we bought the house. Brambles covered the garden wall and the "
    "studies I had planned for the spring were forgotten.",
    "My neighbour lent me a telescope. On clear nights I carried the telescope into the garden and "
    "watched Jupiter and its moons rise over the garden shed.",
    "Children from the street came to look. The libraries in town had books about planets, and the "
    "children borrowed them all; the garden became an observatory.",
    "By autumn the garden was tidy again, and the sourdough starter on the kitchen windowsill had "
    "survived. The sourdough starter is older than the garden now.",
]


def all_keywords(texts: list[str], **kwargs) -> list[list[str]]:
    post, chunks = make_post(texts)
    return extract_keywords(chunks, post, **kwargs)


def test_keywords_are_singular_lemmas():
    keywords = all_keywords(GARDEN_POST)
    flat = {k for ks in keywords for k in ks}
    words = {w for k in flat for w in k.split()}
    assert "child" in words and "library" in words
    assert not words & {"children", "libraries", "studies", "moons", "planets", "nights"}


def test_no_stopwords_or_vague_words_and_one_to_six_per_chunk():
    texts = [
        *GARDEN_POST,
        "It was a good thing, really, and people said it was the best time of the year for all of us. "
        "The lighthouse keeper agreed.",
    ]
    keywords = all_keywords(texts)
    for ks in keywords:
        assert 1 <= len(ks) <= 6
        assert len(set(ks)) == len(ks)
        for k in ks:
            assert k == k.lower()
            assert not set(k.split()) & (STOPWORDS | VAGUE_WORDS), k
    assert "lighthouse keeper" in keywords[-1] or "lighthouse" in keywords[-1]


def test_chunk_without_candidates_gets_none_and_max_keywords_is_respected():
    keywords = all_keywords(["It was what it was, and so it is.", GARDEN_POST[1]])
    assert keywords[0] == []
    post, chunks = make_post([GARDEN_POST[1]])
    assert len(extract_keywords(chunks, post, max_keywords=2)[0]) <= 2


def test_chunk_specific_term_outranks_a_term_spread_over_the_post():
    keywords = all_keywords(GARDEN_POST)
    # "garden" is in every chunk (twice in chunk 1); "telescope" only in chunk 1, also twice.
    telescope_chunk = keywords[1]
    assert telescope_chunk[0] == "telescope"
    assert "garden" not in telescope_chunk or telescope_chunk.index("garden") > 0


def test_repeated_bigram_and_proper_noun_phrase_replace_their_words():
    keywords = all_keywords(GARDEN_POST)
    assert "sourdough starter" in keywords[3]
    assert "sourdough" not in keywords[3] and "starter" not in keywords[3]
    # Even when the word alone scores higher, choosing the phrase drops it.
    scope = "My telescope. " * 6 + "I cleaned the telescope mirror, then the telescope mirror again."
    scope_keywords = all_keywords([scope])[0]
    assert "telescope mirror" in scope_keywords and "telescope" not in scope_keywords
    name_chunk = all_keywords(["Last week Stephen King signed a copy of his memoir for my aunt."])[0]
    assert "stephen king" in name_chunk
    assert "stephen" not in name_chunk and "king" not in name_chunk


def test_verb_forms_are_penalised_and_sentence_starts_are_not_names():
    keywords = all_keywords(["We baked. We baked. The oven was old.", "The telescope arrived. " * 3])
    assert keywords[0].index("oven") < keywords[0].index("baked")
    assert "telescope arrived" not in keywords[1]
    starts = all_keywords(["Yesterday Mary visited the harbour. Luckily Tolkien wrote back."])[0]
    assert not [k for k in starts if " " in k and ("yesterday" in k or "luckily" in k)]
    assert "mary" in starts and "tolkien" in starts


def test_corpus_idf_lowers_a_term_common_across_posts():
    text = ["The kitchen smelled of rosin: the violin lay on the kitchen table beside the violin case."]
    alone = all_keywords(text)[0]
    assert alone.index("kitchen") < alone.index("violin")  # equal counts here; ties go alphabetically
    corpus_df = {"kitchen": 90, "violin": 1}
    with_corpus = all_keywords(text, corpus_df=corpus_df, corpus_size=100)[0]
    assert with_corpus[0] == "violin"
    # corpus_size 0 means no corpus: the same ranking as without it.
    assert all_keywords(text, corpus_df=corpus_df, corpus_size=0)[0] == alone


def test_document_frequencies_count_posts_not_occurrences():
    post_a, _ = make_post(["Violin, violin, violin.", "More violin practice."], "a")
    post_b, _ = make_post(["A violin and a kitchen."], "b")
    post_c = Post("c", "Imported", [], "", "c.json", prechunked=[PreChunk("The kitchen again.")])
    df, n = document_frequencies([post_a, post_b, post_c])
    assert n == 3
    assert df["violin"] == 2
    assert df["kitchen"] == 2
    assert df["practice"] == 1


def test_add_keywords_fills_chunks_in_place_and_keeps_imported_ones():
    post, chunks = make_post(GARDEN_POST)
    chunks[0].keywords = ["imported"]
    add_keywords(chunks, post)
    assert chunks[0].keywords == ["imported"]
    assert chunks[1].keywords and chunks[1].keywords[0] == "telescope"


def test_output_is_deterministic_across_runs_and_hash_seeds():
    first = all_keywords(GARDEN_POST)
    assert all_keywords(GARDEN_POST) == first
    script = (
        "import json, sys; from tests.unit.test_keywords import GARDEN_POST, all_keywords; "
        "print(json.dumps(all_keywords(GARDEN_POST)))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == first


def test_many_chunks_get_keywords_without_a_hang():
    import time

    texts = [f"{GARDEN_POST[i % 4]} Entry {i} mentions quasar{i % 50} and nebula{i % 7}." for i in range(400)]
    post, chunks = make_post(texts)
    start = time.perf_counter()
    keywords = extract_keywords(chunks, post)
    # A hang guard only (~1 s cold, 0.05 s warm on 2 shared cores); bench/speed.py prints the figure.
    assert time.perf_counter() - start < 30
    assert all(keywords)


def test_check_keywords_keeps_at_most_six_short_ones():
    """The limits every chunk's keywords keep (the chunk inspector's edits included): at most 6, each at
    most 4 words and 60 characters; blanks and repeats are dropped first, in order."""
    from core.chunk import KeywordError, check_keywords

    assert check_keywords([" rye ", "", "flour", "rye", "state of mind", "a b c d"]) == [
        "rye", "flour", "state of mind", "a b c d",
    ]  # fmt: skip
    assert len(check_keywords([f"word{i}" for i in range(6)] + ["word0", " "])) == 6
    with pytest.raises(KeywordError, match="at most 6 keywords, and 7 were given"):
        check_keywords([f"word{i}" for i in range(7)])
    with pytest.raises(KeywordError, match="at most 4 words"):
        check_keywords(["one two three four five"])
    with pytest.raises(KeywordError, match=r"60 characters: “x{39}…”"):
        check_keywords(["x" * 61])
    assert check_keywords(["x" * 60]) == ["x" * 60]
