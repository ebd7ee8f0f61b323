"""Text-fragment links (WICG Text Fragments) and reader-page links, checked against the spec's syntax:
`#[fragment]:~:text=[prefix-,]start[,end][,-suffix]`, directives joined by `&`, each part
percent-encoded with `-`, `&` and `,` escaped. Then the reply: every quote, source and closest post
carries its post's address, for the chat, `inkwell ask` and the API alike."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from click.testing import CliRunner

from core.cli import main
from core.text.fragments import (
    EDGE_WORDS,
    LONG_WORDS,
    MAX_DIRECTIVES,
    citation_link,
    encode_part,
    fragment_link,
    reader_link,
    text_directive,
)
from tests.conftest import write

# What may stand unescaped in a text part: the spec's unreserved characters minus its own syntax.
_PART_RE = re.compile(r"^(?:[A-Za-z0-9_.~!*'()]|%[0-9A-F]{2})+$")


def directives(link: str) -> tuple[str, list[list[str]]]:
    """(the page's own fragment, each text directive's decoded parts), parsed the way the spec reads it."""
    fragment = urlsplit(link).fragment
    own, _, tail = fragment.partition(":~:")
    parsed = []
    for directive in tail.split("&"):
        assert directive.startswith("text="), directive
        parts = directive.removeprefix("text=").split(",")
        assert 1 <= len(parts) <= 2 and all(_PART_RE.match(p) for p in parts), parts
        assert not any(p.startswith("-") or p.endswith("-") for p in parts)  # no accidental prefix/suffix
        parsed.append([unquote(p) for p in parts])
    return own, parsed


@pytest.mark.parametrize(
    "sentence",
    [
        "A well-made chair lasts.",  # dash: would read as a prefix/suffix marker
        "Oak, ash, and elm.",  # comma: would split start from end
        "Salt & pepper.",  # ampersand: would start a second directive
        "Ça coûte 5 € à Zürich, déjà.",  # non-ASCII: UTF-8 percent-encoded
        "She said “no” and \"yes\" and 'maybe'.",  # quotes, curly and straight
        "100% #1 a+b=c? [x] /path",  # the URL's own delimiters
    ],
)
def test_a_short_sentence_is_one_part_that_decodes_to_itself(sentence):
    own, parsed = directives(fragment_link("https://blog.example/post/", sentence))
    assert own == "" and parsed == [[sentence]]
    assert not set("-&,# ") & set(encode_part(sentence))


def test_a_long_sentence_is_linked_by_its_first_and_last_words():
    sentence = "I brought the whole stack home, about 40 board-feet, and let it sit on stickers by the stove."
    words = sentence.split()
    assert len(words) > LONG_WORDS
    _, parsed = directives(fragment_link("https://b.example/desk/", sentence))
    assert parsed == [[" ".join(words[:EDGE_WORDS]), " ".join(words[-EDGE_WORDS:])]]
    ten = " ".join(["word"] * LONG_WORDS)
    assert text_directive(ten).count(",") == 0  # exactly the threshold: still whole


def test_existing_fragments_are_kept_and_old_directives_replaced():
    own, parsed = directives(fragment_link("https://b.example/p/#intro", "Hello there."))
    assert own == "intro" and parsed == [["Hello there."]]
    own, parsed = directives(fragment_link("https://b.example/p/#intro:~:text=old", "New words."))
    assert own == "intro" and parsed == [["New words."]]
    assert fragment_link("https://b.example/p/?a=1&b=2", "x y").startswith("https://b.example/p/?a=1&b=2#:~:")
    assert fragment_link("https://b.example/p/#intro:~:text=old", []) == "https://b.example/p/#intro"
    assert fragment_link("", "Anything.") == ""


def test_several_sentences_are_one_link_with_a_directive_each_and_many_one_range():
    sentences = [f"Sentence number {i} here." for i in range(MAX_DIRECTIVES)]
    _, parsed = directives(fragment_link("https://b.example/p/", [sentences[0], *sentences]))
    assert parsed == [[s] for s in sentences]  # a repeat once
    passage = [f"Sentence number {i} of a passage here." for i in range(MAX_DIRECTIVES + 1)]
    _, parsed = directives(fragment_link("https://b.example/p/", passage))
    # More than MAX_DIRECTIVES: one range from the first sentence's first words to the last one's last
    # words, so no quoted sentence is left out of what the browser marks.
    assert parsed == [
        [" ".join(passage[0].split()[:EDGE_WORDS]), " ".join(passage[-1].split()[-EDGE_WORDS:])]
    ]
    assert (
        text_directive("  \n ") == ""
        and fragment_link("https://b.example/p/", ["", " "]) == "https://b.example/p/"
    )


def test_a_post_without_an_address_links_to_the_reader_page():
    link = reader_link("caf\u00e9 & tea", ["One  sentence,\nhere.", "Two & three?"])
    path, _, query = link.partition("?")
    assert path == "read"
    assert parse_qs(query) == {"post": ["caf\u00e9 & tea"], "q": ["One sentence, here.", "Two & three?"]}
    assert citation_link("x", "", "A b.") == reader_link("x", ["A b."])
    # Every quoted sentence keeps its own q (a list of 11 lines quoted from one post: all marked).
    lines = [f"Line {i} of a list." for i in range(11)]
    assert parse_qs(reader_link("x", lines).partition("?")[2])["q"] == lines
    assert citation_link("x", "https://b.example/x/", "A b.") == fragment_link("https://b.example/x/", "A b.")


# The reply -------------------------------------------------------------------------------------------


@pytest.fixture
def blog(tmp_path):
    root = tmp_path / "posts"
    write(
        root / "garden.md",
        "---\ntitle: The Garden\nslug: garden\nurl: https://blog.example/garden/#top\n---\n\n## Tomatoes\n\n"
        "I grow six kinds of tomatoes against the south wall. The Brandywines split in wet Augusts.\n",
    )
    write(root / "trains.txt", "Night Trains\n\nI took the sleeper from Vienna to Rome in 2019.\n")
    db = tmp_path / "db"
    result = CliRunner().invoke(main, ["ingest", str(root), "--data-dir", str(db)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return db


def ask(db, question: str, *flags: str):
    result = CliRunner().invoke(
        main,
        ["ask", question, *flags, "--data-dir", str(db)],
        env={"INKWELL_ROUTING": "off"},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return result


def test_every_quote_and_source_of_a_reply_carries_its_posts_address(blog):
    out = json.loads(ask(blog, "Which tomatoes split in wet Augusts?", "--json").stdout)
    assert out["answer_mode"] == "extractive" and out["sentences"]
    for quote in out["sentences"]:
        assert quote["post_id"] == "garden" and quote["url"] == "https://blog.example/garden/#top"
        own, parsed = directives(quote["link"])
        assert own == "top"
        words = " ".join(quote["text"].split())
        assert parsed[0][0] in words and parsed[0][-1] in words and words.startswith(parsed[0][0])
    (source,) = [s for s in out["sources"] if s["post_id"] == "garden"]
    assert source["url"] == "https://blog.example/garden/#top"
    _, parsed = directives(source["link"])
    assert len(parsed) == len(out["sentences"])  # one directive per quoted sentence, in order
    for parts, quote in zip(parsed, out["sentences"], strict=True):
        assert " ".join(quote["text"].split()).startswith(parts[0])
    assert all(
        h["url"] == "https://blog.example/garden/#top" for h in out["context"] if h["post_id"] == "garden"
    )
    shown = ask(blog, "Which tomatoes split in wet Augusts?")
    assert "The Garden (garden) https://blog.example/garden/#top:~:text=" in shown.stdout


def test_the_closest_posts_of_a_decline_carry_their_addresses(blog):
    out = json.loads(ask(blog, "Who won the 2018 football world cup?", "--json").stdout)
    assert out["answer_mode"] == "none" and out["suggestions"]
    expected = {"garden": "https://blog.example/garden/#top", "trains": ""}
    assert {s["post_id"]: s["url"] for s in out["suggestions"]} == {
        s["post_id"]: expected[s["post_id"]] for s in out["suggestions"]
    }
    assert "garden" in {s["post_id"] for s in out["suggestions"]}
