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


def test_no_before_a_number_is_the_numero_sign_not_a_sentence_end():
    text = "By that test my 1940s Stanley No. 5 jack plane passes easily. He said No. Then he left."
    assert split_sentences(text) == [
        "By that test my 1940s Stanley No. 5 jack plane passes easily.",
        "He said No.",
        "Then he left.",
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


# Long paragraphs: the same chunks as before, in linear time ------------------------------------------

# sha256 (first 16 hex) of paragraph_chunks at targets 60, 150 and 300, computed with the chunker
# before it counted tokens once per paragraph (core/text/tokens.py SliceCounter): the demo posts and
# long paragraphs, sentences and words must come out byte for byte the same.
PINNED = {
    "cherry-writing-desk": "822c036de9d2c532",
    "choosing-boards-at-the-sawmill": "b2b33e13c07405ab",
    "five-years-in-wickham-hollow": "522536b13de8679d",
    "in-praise-of-slow-work": "f61295b88a13a652",
    "learning-a-craft-at-thirty-five": "f7d03afbcab6605c",
    "leaving-the-feed": "e25855d9f5fa418a",
    "notes-on-a-cabinetmakers-notebook": "f03aad6fa28eb6c4",
    "notes-on-shop-class-as-soulcraft": "f2fd5bdac7e58787",
    "notes-on-the-nature-and-art-of-workmanship": "c3b1ff8b87f9a411",
    "notes-on-wanderlust": "36e7dc7eee64cfa4",
    "on-walking": "834a1dd2f5e2743f",
    "scraped-essay": "9cc98636cee6cd9b",
    "shaker-step-stool": "1d6b265119bb7c3a",
    "sharpening-saturdays": "dab233ed34e72532",
    "the-mistake-jar": "e7e14eac44b367c2",
    "walnut-porch-bench": "6c28acb121ad5cc1",
    "white-oak-dining-table": "f54550f1dcded53f",
    "why-i-still-write-letters": "c29093285c6d0c95",
    "why-there-are-no-comments-here": "cb13b7b4bc595a89",
    "why-this-blog-exists": "1ddad555981e24a4",
    "long-paragraph": "2df219d44a76e7cb",
    "long-sentence": "f04be8c0c4125731",
    "long-lines": "41667c06054fa35b",
    "long-word": "52d7d516ef59d027",
    "tags": "aa11b4ab893e7b62",
}


def pinned_cases() -> dict[str, list[Block]]:
    from core.parse import parse_paths
    from tests.conftest import DEMO

    cases = {
        p.post_id: p.blocks for p in sorted(parse_paths([DEMO / "posts"]).posts, key=lambda p: p.post_id)
    }
    long = sentences(300)
    cases["long-paragraph"] = [Block(long)]
    cases["long-sentence"] = [Block(long.replace(".", ""))]
    cases["long-lines"] = [Block(long.replace(". ", ".\n"))]
    cases["long-word"] = [Block("x" + "ab7" * 900 + " tail. " + sentences(20))]
    cases["tags"] = [Block(sentences(40).replace("(7).", "(7). [REF: Smith 2019, pp. 4-5] [IMAGE: a boat]"))]
    return cases


def test_chunks_are_byte_for_byte_those_pinned():
    import hashlib
    import json

    digests = {}
    for name, blocks in pinned_cases().items():
        h = hashlib.sha256()
        for target in (60, 150, 300):
            h.update(json.dumps(paragraph_chunks(blocks, target)).encode())
        digests[name] = h.hexdigest()[:16]
    assert digests == PINNED


ODD_TEXTS = [
    "Prices rose 12345.678 percent in 2019!!! Then fell...   again;  twice\nand  thrice\t\tover.",
    "東京の夏は暑い。 京都も同じだ。 Mixed with English words and 数字 123 here.",
    "Emoji 🪵🪚 and accents: café crème, naïve façade. Quotes \"like this\" and 'that' — dashes – too.",
    "URLs https://example.com/a/b?c=d&e=f and e-mail me@example.org, paths /usr/local/bin/.",
]


def test_slice_counts_are_exact_and_estimates_within_slack():
    """SliceCounter's exact counts equal count_tokens (also when grown incrementally), and its
    estimates stay within SLACK, which is what makes the fast chunker's choices the exact ones."""
    import random

    from core.text.tokens import SliceCounter

    rng = random.Random(7)
    texts = [b.text for blocks in pinned_cases().values() for b in blocks if not b.heading] + ODD_TEXTS
    worst = 0
    for text in texts:
        counter = SliceCounter(text)
        assert counter.total == count_tokens(text)
        cuts = sorted({0, len(text), *(m.end() for m in re.finditer(r"\S+", text))})
        for _ in range(20):
            i = rng.randrange(len(cuts) - 1)
            a = (
                cuts[i]
                if i == 0
                else cuts[i] + 1
                if cuts[i] < len(text) and text[cuts[i]] == " "
                else cuts[i]
            )
            for b in cuts[i + 1 : i + 8]:  # growing slices from one start: the incremental path
                assert counter.exact(a, b) == count_tokens(text[a:b]), (text[a:b],)
                worst = max(worst, abs(counter.exact(a, b) - counter.estimate(a, b)))
    assert worst <= SliceCounter.SLACK


def one_line(words: int, punctuation: bool = True) -> str:
    text = " ".join(f"{SENTENCES[i % len(SENTENCES)][:-1]} ({i})." for i in range(words // 14))
    return text if punctuation else text.replace(".", "").replace(",", "").replace(":", "")


@pytest.mark.parametrize("punctuation", [True, False], ids=["sentences", "one-sentence"])
def test_a_long_one_line_paragraph_is_chunked_in_linear_work(monkeypatch, punctuation):
    """Work is measured as characters handed to tiktoken: a few times the text (7-8×), where the chunker
    that re-counted growing slices encoded 112 times this 400 KB line, more the longer the line."""
    from core.text.tokens import encoding

    enc = encoding()
    encoded = [0]
    original = enc.encode

    def counting(text, **kwargs):
        encoded[0] += len(text)
        return original(text, **kwargs)

    monkeypatch.setattr(enc, "encode", counting)
    text = one_line(70_000, punctuation)  # ≈ 400 KB
    chunks = paragraph_chunks([Block(text)], TARGET)
    assert "".join(t for _, t in chunks).replace(" ", "") == text.replace(" ", "")
    assert all(count_tokens(t) <= TARGET for _, t in chunks)
    assert encoded[0] < 16 * len(text), encoded[0] / len(text)  # 7-8 now


@pytest.mark.parametrize(
    "text",
    ["[REF: an unclosed tag " * 20_000, "x" * 300_000 + ".", "[" * 200_000],
    ids=["unclosed-tags", "one-long-word", "brackets"],
)
def test_pathological_lines_are_chunked_quickly(text):
    """Regexes that rescanned the rest of the text from every "[REF:" (or searched a 300 KB word for
    an abbreviation) made these quadratic: minutes; now 0.5-3 s each on 2 shared cores."""
    import time

    started = time.perf_counter()
    chunks = paragraph_chunks([Block(text)], TARGET)
    assert "".join(t for _, t in chunks).replace(" ", "") == text.replace(" ", "")
    # A hang guard only: the quadratic scans took minutes. bench/speed.py prints the figures.
    assert time.perf_counter() - started < 60
