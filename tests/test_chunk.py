from __future__ import annotations

import itertools
import re

import pytest

from core.chunk import chunk_post, fixed_chunks, paragraph_chunks
from core.config import Settings
from core.models import Block, Post, PreChunk
from core.text import count_tokens, split_sentences
from core.text.sentences import TAG_RE

TARGET = Settings().chunk_tokens

SENTENCES = [
    "The harbour was quiet when we arrived, and the boats rocked gently against the old stone pier.",
    "My grandfather had fished here for forty years before the cannery closed.",
    "He kept a notebook of every catch, written in pencil and smudged with salt.",
    "I found it in a drawer last winter, under a pile of receipts and letters.",
    "Reading it felt like listening to him talk again, slow and precise.",
    "Some pages list only the weather: wind from the west, rain by noon.",
    "Others describe arguments with the harbour master about mooring fees.",
    "Near the end, the handwriting grows shaky and the entries get shorter.",
]


def make_post(blocks: list[Block], **kwargs) -> Post:
    return Post(post_id="p1", title="Notebook", blocks=blocks, raw="", source="test.md", **kwargs)


def sentences(n: int, offset: int = 0) -> str:
    """n numbered sentences, so every sentence is distinct."""
    return " ".join(f"{SENTENCES[(i + offset) % len(SENTENCES)][:-1]} ({i + offset})." for i in range(n))


def test_short_paragraphs_merge_up_to_the_target():
    paragraphs = [sentences(2, offset=i * 2) for i in range(20)]
    chunks = paragraph_chunks([Block(p) for p in paragraphs], TARGET)
    texts = [text for _, text in chunks]
    assert 1 < len(texts) < len(paragraphs)
    assert all(count_tokens(t) <= TARGET for t in texts)
    assert "\n\n".join(texts) == "\n\n".join(paragraphs)  # nothing lost, reordered or cut
    # Greedy: a chunk only ends when the next paragraph would not have fitted.
    for text, following in itertools.pairwise(texts):
        next_paragraph = following.split("\n\n")[0]
        assert count_tokens(text + "\n\n" + next_paragraph) > TARGET


@pytest.mark.parametrize("n", [33, 37, 60])
def test_long_paragraph_is_split_at_sentence_boundaries(n):
    paragraph = sentences(n)
    assert count_tokens(paragraph) > 1.9 * TARGET
    chunks = [text for _, text in paragraph_chunks([Block(paragraph)], TARGET)]
    assert len(chunks) >= 3
    assert all(count_tokens(c) <= TARGET for c in chunks)
    assert all(c.endswith(".") and c[0].isupper() for c in chunks)
    assert " ".join(chunks) == paragraph
    # Pieces are balanced (greedy filling would leave a stub at the end for some n).
    sizes = [count_tokens(c) for c in chunks]
    assert min(sizes) > 0.6 * max(sizes)


def test_text_without_blank_lines_is_split_by_sentences_and_keeps_line_breaks():
    text = "\n".join(sentences(3, offset=i * 3) for i in range(25))  # one block, single newlines only
    chunks = chunk_post(make_post([Block(text)]), Settings())
    assert len(chunks) > 2
    assert all(c.tokens <= TARGET for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)
    # Rejoining with the whitespace the cuts removed gives back the original text.
    assert re.sub(r"\s+", " ", " ".join(c.text for c in chunks)) == re.sub(r"\s+", " ", text)
    assert any("\n" in c.text for c in chunks)


def test_sentence_longer_than_target_is_cut_between_words():
    words = [f"word{i}" for i in range(1500)]
    sentence = " ".join(words) + "."
    chunks = [text for _, text in paragraph_chunks([Block(sentence)], TARGET)]
    assert len(chunks) > 1
    assert all(count_tokens(c) <= TARGET for c in chunks)
    assert " ".join(chunks) == sentence  # cuts only at spaces


def test_word_longer_than_target_is_cut_by_tokens():
    blob = "é" + "xq" * 2000  # no spaces, no sentence ends
    chunks = [text for _, text in paragraph_chunks([Block(blob)], TARGET)]
    assert len(chunks) > 1
    assert "".join(chunks) == blob
    assert all(count_tokens(c) <= TARGET for c in chunks)


def test_small_last_piece_joins_the_previous_chunk():
    n = 1
    while count_tokens(sentences(n + 1)) <= TARGET:
        n += 1
    body = sentences(n)  # as many sentences as fit in one chunk
    k = 1
    while count_tokens(body + "\n\n" + "Gulls" + " gulls" * k + ".") <= TARGET:
        k += 1
    tail = "Gulls" + " gulls" * k + "."
    assert count_tokens(tail) < 0.2 * TARGET
    assert count_tokens(body + "\n\n" + tail) > TARGET  # would not fit by the plain rule
    chunks = paragraph_chunks([Block(body), Block(tail)], TARGET)
    assert chunks == [("", body + "\n\n" + tail)]
    assert count_tokens(chunks[0][1]) <= 1.2 * TARGET


def test_headings_become_sections_and_are_never_merged_across():
    blocks = [
        Block("Before any heading."),
        Block("Arrival", heading=True),
        Block("We came by boat."),
        Block("It rained."),
        Block("Departure", heading=True),
        Block("We left by train."),
    ]
    chunks = chunk_post(make_post(blocks), Settings())
    assert [(c.section, c.text) for c in chunks] == [
        ("", "Before any heading."),
        ("Arrival", "We came by boat.\n\nIt rained."),
        ("Departure", "We left by train."),
    ]


def test_tags_are_kept_verbatim_and_never_split():
    ref = "[REF: Smith, J. 2020. The Sea. Penguin. See p. 4. Also U.S. ed.]"
    image = "[IMAGE: A boat. Two gulls! A storm coming? Yes.]"
    parts = []
    for i in range(40):
        parts.append(sentences(1, offset=i))
        if i % 7 == 3:
            parts.append(ref if i % 2 else image)
    paragraph = " ".join(parts)
    chunks = [text for _, text in paragraph_chunks([Block(paragraph)], 120)]
    assert len(chunks) > 3
    joined = " ".join(chunks)
    assert joined == paragraph
    tags_in_chunks = [tag for c in chunks for tag in TAG_RE.findall(c)]
    assert tags_in_chunks == TAG_RE.findall(paragraph)
    for c in chunks:  # no chunk holds half a tag
        assert c.count("[") == c.count("]")
    assert all(s.count("[") == s.count("]") for s in split_sentences(paragraph))


def test_split_sentences_handles_abbreviations_and_decimals():
    text = (
        "Dr. Smith moved to the U.S. in 2020. He paid 3.5 dollars, e.g. for coffee. "
        "See fig. 3 for the map. Prof. Jones agreed! Did she?\nYes, on p. 12 of the report."
    )
    assert split_sentences(text) == [
        "Dr. Smith moved to the U.S. in 2020.",
        "He paid 3.5 dollars, e.g. for coffee.",
        "See fig. 3 for the map.",
        "Prof. Jones agreed!",
        "Did she?",
        "Yes, on p. 12 of the report.",
    ]


def test_fixed_strategy_sizes_and_overlap():
    text = " ".join(f"w{i:04d}" for i in range(1200))  # 6,000 characters, every word distinct
    chunks = fixed_chunks(text, size=1200, overlap=200)
    assert len(chunks) >= 5
    assert all(len(c) <= 1200 for c in chunks)
    assert chunks[0] == text[: len(chunks[0])] and text.endswith(chunks[-1])
    words = set(text.split())
    for prev, nxt in itertools.pairwise(chunks):
        assert set(nxt.split()) <= words and set(prev.split()) <= words  # cut at whitespace only
        shared = max(k for k in range(len(nxt) + 1) if prev.endswith(nxt[:k]))
        assert 150 <= shared <= 200  # the overlap really starts the next chunk
        assert text.index(nxt) == text.index(prev) + len(prev) - shared


def test_fixed_strategy_through_chunk_post_uses_settings_and_keeps_tags_whole():
    tag = "[IMAGE: a very long description of a harbour at dusk with boats and gulls]"
    blocks = [Block("Harbour", heading=True)] + [Block(f"{sentences(2, i)} {tag}") for i in range(8)]
    settings = Settings(chunk_strategy="fixed", fixed_chars=300, fixed_overlap=60)
    chunks = chunk_post(make_post(blocks), settings)
    assert len(chunks) > 5
    assert all(len(c.text) <= 300 for c in chunks)
    assert all(c.section == "Harbour" for c in chunks)
    for c in chunks:
        for fragment in re.findall(r"\[[^\]]*\]?|[^\[]*\]", c.text):
            assert fragment == tag  # a tag is either whole or absent


def test_prechunked_posts_pass_through():
    post = make_post(
        [Block("ignored")],
        prechunked=[PreChunk("First text.", "Intro", ["harbour"], "custom-7"), PreChunk("Second.")],
    )
    chunks = chunk_post(post, Settings())
    assert [(c.chunk_id, c.index, c.text, c.section, c.keywords) for c in chunks] == [
        ("custom-7", 0, "First text.", "Intro", ["harbour"]),
        ("p1#0001", 1, "Second.", "", []),
    ]
    assert chunks[0].tokens == count_tokens("First text.")


def test_chunk_ids_indexes_and_token_counts():
    blocks = [Block(sentences(40, offset=i)) for i in range(3)]
    chunks = chunk_post(make_post(blocks), Settings())
    assert [c.chunk_id for c in chunks] == [f"p1#{i:04d}" for i in range(len(chunks))]
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(c.post_id == "p1" and c.tokens == count_tokens(c.text) and c.keywords == [] for c in chunks)


@pytest.mark.parametrize("strategy", ["paragraph", "fixed"])
def test_empty_posts_give_no_chunks(strategy):
    settings = Settings(chunk_strategy=strategy)
    assert chunk_post(make_post([]), settings) == []
    assert chunk_post(make_post([Block("  "), Block("\n")]), settings) == []


def test_headings_alone_give_no_paragraph_chunks():
    assert chunk_post(make_post([Block("Title", heading=True), Block(" ")]), Settings()) == []


def test_settings_target_is_respected():
    paragraph = sentences(30)
    chunks = chunk_post(make_post([Block(paragraph)]), Settings(chunk_tokens=80))
    assert len(chunks) > 5
    assert all(c.tokens <= 80 for c in chunks)
