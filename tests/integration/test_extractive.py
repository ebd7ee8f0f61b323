"""core.answer.extractive and core.answer.abstain: answers made only of the author's sentences, and the no-answer
gate, on a real demo table with the real embedder (built once for the module)."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

from core.answer import extractive
from core.answer.abstain import NO_ANSWER_MESSAGE, judge, suggest
from core.answer.extractive import MAX_WORDS, extract_answer, is_signpost
from core.answer.quotable import sentence_units
from core.config import Settings
from core.evaluate import evidence_found
from core.models import Hit
from core.profiles import profile_for
from core.search import search
from core.text import stemmer_for
from tests.conftest import DEMO, ROOT

EVAL = DEMO / "eval"
QUESTIONS = {q["id"]: q for q in map(json.loads, (EVAL / "queries.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def demo(demo_table):
    return demo_table  # the demo blog, ingested once per session (tests/conftest.py)


@pytest.fixture(scope="module")
def asked(demo, embedder):
    """question → (hits, answer), each asked once per module (hybrid, the default mode)."""
    settings, store = demo
    cache: dict[tuple[str, str], tuple[list[Hit], extractive.ExtractiveAnswer]] = {}

    def ask(question: str, mode: str = "hybrid"):
        if (question, mode) not in cache:
            hits = search(question, settings, store=store, embedder=embedder, mode=mode).hits
            cache[(question, mode)] = hits, extract_answer(question, hits, embedder)
        return cache[(question, mode)]

    return ask


def hit(text: str, n: int = 0, post: str = "p", title: str = "A Post", relevance: float = 1.0) -> Hit:
    return Hit(post, title, "writings", f"{post}#{n:04d}", "", text, [], relevance, n + 1)


SAMPLE = ["q1", "q3", "q6", "q8", "q10", "q11"]


# Verbatim, order, budget ------------------------------------------------------------------------------


@pytest.mark.parametrize("qid", SAMPLE)
def test_every_sentence_is_a_verbatim_slice_of_a_hit(asked, qid):
    hits, answer = asked(QUESTIONS[qid]["text"])
    assert answer.sentences
    by_id = {h.chunk_id: h for h in hits}
    for quote in answer.sentences:
        source = by_id[quote.chunk_id]
        assert source.text[quote.start : quote.start + len(quote.text)] == quote.text
        assert (quote.post_id, quote.title) == (source.post_id, source.title)
        assert not re.search(r"\[(?:REF|IMAGE):", quote.text)


def test_the_text_adds_only_the_frame(asked):
    _, answer = asked(QUESTIONS["q8"]["text"])
    rest = answer.text
    for quote in answer.sentences:
        rest = rest.replace(quote.text, "", 1)
    for _, title, _ in answer.groups():
        rest = rest.replace(f"From *{title}*:", "", 1)
    for quote in answer.sentences:  # a section the passage goes on into: its heading, the author's words
        rest = (
            rest.replace(f"**{extractive.markdown_literal(quote.section)}**", "", 1)
            if quote.section
            else rest
        )
    assert set(rest) <= set(" \n")  # never a "…": a passage is the author's text as written


@pytest.mark.parametrize("qid", SAMPLE)
def test_sentences_read_post_by_post_in_the_posts_order(asked, qid):
    _, answer = asked(QUESTIONS[qid]["text"])
    posts = [q.post_id for q in answer.sentences]
    blocks = [p for i, p in enumerate(posts) if i == 0 or posts[i - 1] != p]
    assert len(blocks) == len(set(blocks)), f"a post's sentences are split up: {posts}"
    for _, _, quotes in answer.groups():
        positions = [(q.chunk_id, q.index) for q in quotes]
        assert positions == sorted(positions)


@pytest.mark.parametrize("qid", SAMPLE)
def test_a_passage_is_contiguous_and_within_its_budget(asked, qid):
    """At most two passages (posts), each the author's sentences one after another in one chunk."""
    _, answer = asked(QUESTIONS[qid]["text"])
    groups = answer.groups()
    assert 1 <= len(groups) <= 2
    for _, _, quotes in groups:
        body = quotes[1:] if is_signpost(quotes[0].text) else quotes  # a list's lead-in may come before
        for before, after in itertools.pairwise(body):  # the next sentence, or the next chunk's first
            assert (after.chunk_id, after.index) == (before.chunk_id, before.index + 1) or (
                after.chunk_id > before.chunk_id and after.index == 0 and after.joined == "paragraph"
            ), (before, after)
        assert len(quotes) == 1 or sum(len(q.text.split()) for q in quotes) <= MAX_WORDS


def test_a_smaller_budget_gives_a_shorter_answer(asked, embedder):
    question = QUESTIONS["q6"]["text"]
    hits, _ = asked(question)
    short = extract_answer(question, hits, embedder, max_words=30)
    for _, _, quotes in short.groups():
        assert len(quotes) == 1 or sum(len(q.text.split()) for q in quotes) <= 30


def test_a_list_line_keeps_its_lead_in_and_the_layout(embedder):
    text = (
        "The shop is cold in January, so I sharpen by the stove.\n\n"
        "My sawmill kit fits in a canvas bag:\n\n"
        "A pin-type moisture meter. The single most important thing in the bag.\n"
        "A low-angle block plane, to take a few shavings off a rough board.\n"
        "A headlamp, because the back of the shed is dark."
    )
    hits = [hit(text)]
    answer = extract_answer("What is the most important thing in your bag?", hits, embedder)
    assert answer.sentences[0].text == "My sawmill kit fits in a canvas bag:", answer.text
    assert "My sawmill kit fits in a canvas bag:\n\nA pin-type moisture meter." in answer.text
    assert "important thing in the bag.  \nA low-angle block plane" in answer.text  # a list line each


@pytest.mark.parametrize("qid", SAMPLE)
def test_no_duplicate_or_near_duplicate_sentences(asked, embedder, qid):
    _, answer = asked(QUESTIONS[qid]["text"])
    texts = [q.text for q in answer.sentences]
    assert len(set(texts)) == len(texts)
    vectors = embedder.embed(texts)
    similarity = vectors @ vectors.T - np.eye(len(texts)) * 2
    assert similarity.max() < profile_for(embedder.model_id).passage.near_duplicate


def test_a_sentence_repeated_in_overlapping_chunks_is_quoted_once(embedder):
    text = "I dry my walnut boards for a full year before building anything with them. The shed is cold."
    hits = [hit(text, 0), hit("Some other words here. " + text, 1, relevance=0.9)]
    answer = extract_answer("How long do you dry walnut boards?", hits, embedder)
    texts = [q.text for q in answer.sentences]
    assert texts.count("I dry my walnut boards for a full year before building anything with them.") == 1


# Reader-facing details --------------------------------------------------------------------------------


def test_sentence_units_are_slices_without_markers_tags_or_run_on_lines():
    text = (
        "Height: 30 inches.\nWidth: 15 inches, a little wider than usual.\n"
        "- Novelty over depth is what the feed rewards.\n[IMAGE: the bench] It took five weeks in all."
    )
    units = sentence_units(text)
    for start, sentence in units:
        assert text[start : start + len(sentence)] == sentence
    sentences = [s for _, s in units]
    assert "Height: 30 inches." in sentences
    assert "Novelty over depth is what the feed rewards." in sentences
    assert "It took five weeks in all." in sentences
    assert not any("[IMAGE" in s for s in sentences)


def test_a_quotation_of_several_sentences_stays_one_unit():
    text = (
        'He laughed and said, "Ten thousand hours to know what you are doing wrong. Mastery comes after." '
        'Then he went back to work. "Yes." He nodded. In pencil he wrote: “Yes. But buy extra.”'
    )
    units = sentence_units(text)
    assert [u for _, u in units] == [
        'He laughed and said, "Ten thousand hours to know what you are doing wrong. Mastery comes after."',
        "Then he went back to work.",
        '"Yes."',
        "He nodded.",
        "In pencil he wrote: “Yes. But buy extra.”",
    ]
    assert all(text[start : start + len(u)] == u for start, u in units)
    # A quotation that never closes is not allowed to swallow the rest of the paragraph.
    runaway = 'She said, "one. ' + " ".join(f"Sentence number {i} goes on here." for i in range(30))
    assert max(len(u.split()) for _, u in sentence_units(runaway)) <= 70


def test_headings_dates_and_fragments_are_never_quoted(embedder):
    text = "The dimensions:\nDecember 8, 2019\nNot ten.\nThe bench seat is eighteen inches deep and made of walnut."
    answer = extract_answer("How deep is the bench seat?", [hit(text)], embedder)
    assert [q.text for q in answer.sentences] == [
        "The bench seat is eighteen inches deep and made of walnut."
    ]


def test_a_sentence_pointing_back_brings_the_one_before(embedder):
    text = (
        "Ezra does not believe in lectures at all. His teaching method has three steps:\n"
        "He does the thing once, slowly, without explaining how the chisel works."
    )
    question = "How does he teach the chisel, slowly and without explaining?"
    answer = extract_answer(question, [hit(text)], embedder)
    texts = [q.text for q in answer.sentences]
    dangling = "He does the thing once, slowly, without explaining how the chisel works."
    assert dangling in texts
    assert texts[texts.index(dangling) - 1] == "His teaching method has three steps:"
    assert "His teaching method has three steps:  \nHe does the thing once" in answer.text  # its own line
    # However small the budget, the sentence pointing back never stands without the one it continues.
    short = [q.text for q in extract_answer(question, [hit(text)], embedder, max_words=5).sentences]
    assert dangling not in short or short[short.index(dangling) - 1] == "His teaching method has three steps:"


def test_a_sentence_taking_up_a_word_of_the_one_before_brings_it(embedder):
    # "The felt" names what the sentence before introduced: quoted alone, it refers to nothing.
    text = (
        "Winter is quiet in the apiary. I wrap my two beehives in black roofing felt every November. "
        "The felt soaks up the winter sun and keeps the cluster warm on cold days."
    )
    answer = extract_answer("What keeps the cluster warm in the winter sun?", [hit(text)], embedder)
    texts = [q.text for q in answer.sentences]
    taking_up = "The felt soaks up the winter sun and keeps the cluster warm on cold days."
    assert taking_up in texts
    assert texts[texts.index(taking_up) - 1] == "I wrap my two beehives in black roofing felt every November."


# Evidence and the gate --------------------------------------------------------------------------------


def test_a_signpost_lends_its_closeness_to_the_sentence_it_announces(embedder):
    text = (
        "Ezra lives a mile down the road from my shop.\n"
        "His teaching method, as far as I can reconstruct it, has three steps:\n"
        "- He does the thing once, slowly, without explaining.\n"
        "- Then he watches me do it while saying almost nothing.\n"
        "My own method for sharpening is a strop and green compound, after every tenth cut.\n"
        "The coffee in his shop is terrible and I drink it anyway."
    )
    hits = [Hit("p", "Learning a Craft", "writings", "p#0000", "", text, [], 1.0, 1)]
    question = "What is his teaching method?"
    # The announced step, with its signpost as the lead its "He" needs.
    answer = extract_answer(question, hits, embedder)
    assert "He does the thing once, slowly, without explaining." in answer.text, answer.text
    assert is_signpost("His teaching method, as far as I can reconstruct it, has three steps:")
    assert is_signpost("Here is what I use now.") and is_signpost("Here’s the whole system:")
    assert not is_signpost("Height:") and not is_signpost("There is what I use now.")


def test_a_passage_going_on_into_the_next_section_shows_its_heading(embedder):
    # The passage ran from the end of one section into the next, and the reader saw the two sections'
    # sentences run together with nothing to say the subject had turned.
    intro = (
        "People have asked me why I would start a blog at the same moment I am trying to get away from "
        "screens. It is a fair question, and this first post is my answer."
    )
    reason = "A mile down the road lives Ezra, who built kitchens for forty years and agreed to teach me."
    more = "He keeps a notebook for every job he ever did, and this blog is my version of those notebooks."
    hits = [
        Hit("blog", "Why This Blog Exists", "writings", "blog#0000", "", intro, [], 1.0, 1),
        Hit(
            "blog",
            "Why This Blog Exists",
            "writings",
            "blog#0001",
            "Reason one: a logbook",
            reason,
            [],
            0.9,
            2,
        ),
        Hit(
            "blog", "Why This Blog Exists", "writings", "blog#0002", "Reason one: a logbook", more, [], 0.8, 3
        ),
    ]
    answer = extract_answer("Why would you start a blog while getting away from screens?", hits, embedder)
    texts = [q.text for q in answer.sentences]
    assert texts[0].startswith("People have asked") and reason in texts, answer.text
    sections = [q.section for q in answer.sentences]
    assert sections[texts.index(reason)] == "Reason one: a logbook", sections
    assert sections.count("Reason one: a logbook") == 1  # the section's second chunk goes on under it
    assert "my answer.\n\n**Reason one: a logbook**\n\nA mile down the road" in answer.text, answer.text
    [(_, _, plain)] = answer.passages()
    assert "my answer.\n\nReason one: a logbook\n\nA mile down the road" in plain, plain
    # The quotes themselves stay verbatim slices of their chunks.
    for q in answer.sentences:
        chunk = next(h for h in hits if h.chunk_id == q.chunk_id)
        assert chunk.text[q.start : q.start + len(q.text)] == q.text


def test_a_passage_never_ends_on_a_lead_in_cut_off_from_its_list(embedder):
    # The chunk ends on the list's lead-in and the list is in a chunk retrieval did not bring: the lead-in
    # was quoted alone, ending the answer on "…4/4 stock:" with nothing after it.
    first = (
        "I buy most of my lumber at Dunmore Brothers, a small sawmill an hour north.\n\n"
        "For the record, prices at Dunmore Brothers in May 2020 for air-dried 4/4 stock:"
    )
    other = "The white oak table took 146 hours over eight months, and it nearly broke me twice."
    hits = [hit(first, post="mill", title="Choosing Boards"), hit(other, post="table", title="Oak Table")]
    for question in (
        "What were the prices for air-dried stock at Dunmore Brothers?",
        "How much did white oak cost?",
    ):
        answer = extract_answer(question, hits, embedder)
        assert answer.sentences, answer.text
        assert not any(q.text.rstrip().endswith(":") for q in answer.sentences), answer.text
        assert all(not is_signpost(q.text) for q in answer.sentences), answer.text
    # With the list there, the lead-in comes with it, as before.
    whole = first + "\n\n- **White oak**, $7.00, more for quartersawn.\n- **Ash**, $4.00. Cheap right now."
    answer = extract_answer("How much did white oak cost?", [hit(whole, post="mill")], embedder)
    assert "For the record, prices" in answer.text and "$7.00" in answer.text, answer.text


def test_a_sentence_too_short_to_quote_alone_lends_its_closeness_to_the_one_before_it(embedder):
    text = (
        "For the record, this spring's prices:\n\n"
        "Hard maple, $5.50. Dense and pale; I use it for drawer sides and anything that gets hard wear.\n"
        "Black cherry, $6.25 a board foot. My favorite indoor wood. It darkens to a deep reddish brown.\n"
        "White oak, $7.00, more for quartersawn. Strong, rot-resistant, and beautiful quartersawn."
    )
    question = "What's your favourite wood?"
    answer = extract_answer(question, [hit(text)], embedder)
    assert answer.sentences[0].text == "For the record, this spring's prices:", answer.text
    assert "Black cherry, $6.25 a board foot. My favorite indoor wood." in answer.text
    # The short sentence is read with its line, never quoted alone, and without it nothing lends.
    assert all(q.text != "My favorite indoor wood." or n > 0 for n, q in enumerate(answer.sentences))
    without = extract_answer(question, [hit(text.replace(" My favorite indoor wood.", ""))], embedder)
    black = next(q for q in answer.sentences if q.text.startswith("Black cherry"))
    black_without = next((q for q in without.sentences if q.text.startswith("Black cherry")), None)
    assert black_without is None or black.similarity > black_without.similarity, (answer.text, without.text)


def test_passages_hold_the_evidence_more_often_than_the_naive_two_sentence_quoter(asked, embedder):
    """Set-level, on the same hits: the passage answer quotes an evidence sentence for more of the
    English demo questions than the baseline of core/evaluate/baseline.py, and for most of them."""
    from core.evaluate.baseline import naive_answer

    english = [QUESTIONS[f"q{n}"] for n in range(1, 13)]  # q13-q15 are in Turkish, German, French
    passages = naive = 0
    for q in english:
        hits, answer = asked(q["text"])
        evidence = [q["evidence"]] if isinstance(q["evidence"], str) else q["evidence"]
        passages += bool(evidence_found([" ".join(s.text for s in answer.sentences)], evidence, 1))
        baseline = naive_answer(q["text"], hits, embedder)
        naive += bool(evidence_found([" ".join(s.text for s in baseline.sentences)], evidence, 1))
    assert passages > naive, (passages, naive)
    assert passages >= len(english) / 2, (passages, len(english))


def test_every_demo_question_is_answered(asked):
    refused = []
    for qid, q in QUESTIONS.items():
        hits, answer = asked(q["text"])
        verdict = judge(q["text"], hits, answer)
        if not verdict.answer:
            refused.append((qid, verdict.reason, round(verdict.similarity, 3)))
    assert not refused


@pytest.mark.parametrize(
    "question",
    [
        "What is the capital of Australia?",
        "asdfghjkl",
        "purple monkey dishwasher",
        "?",
        "What does Stephen King think about outlining a novel before writing it?",
        # Across languages MiniLM's similarity is noise, so the gate asks for a word the posts share
        # with the question: neither a year ("On October 5, 2018, I gave notice.") nor a German
        # article that is also an English word ("die") counts.
        "Wer hat die Fußball-WM 2018 gewonnen?",
        "Was kostet die Miete in Berlin?",
    ],
)
@pytest.mark.parametrize("mode", ["hybrid", "fts"])
def test_off_topic_and_nonsense_questions_are_gated(asked, question, mode):
    try:
        hits, answer = asked(question, mode)
    except ValueError:  # search refuses a question with nothing to search for: nothing to answer
        return
    verdict = judge(question, hits, answer)
    assert not verdict.answer, (verdict.reason, verdict.similarity, answer.text)
    assert verdict.suggestions == suggest(hits)


def test_question_words_count_as_found_in_another_form(embedder):
    """A question word the passages hold in another form is not "missing": the same stem, or the end of
    a compound. The question's lemma of "didn't" ("do") is a stop word, not a word the posts lack."""
    hits = [
        hit("If I built the desk again, I would do three things in a different order.", 0),
        hit("The offcuts go into the woodstove, and the ruined joints go into a jar on the shelf.", 1),
    ]
    answer = extract_answer("What would she do differently with the desk?", hits, embedder)
    assert judge("What would she do differently with the desk?", hits, answer).missing == []
    question = "Why didn't she burn the ruined joints in the stove?"
    assert judge(question, hits, extract_answer(question, hits, embedder)).missing == ["burn"]
    # Not a compound's head: a short word ("war" in "postwar", "end" in "weekend"), or the end of a
    # word whose beginning is no word ("king" in "woodworking").
    postwar = [hit("In the postwar years every weekend was for woodworking in the shop and the garden.", 0)]
    question = "When did the war end?"
    assert judge(question, postwar, extract_answer(question, postwar, embedder)).missing == ["end", "war"]
    question = "What did she think of the king?"
    assert judge(question, postwar, extract_answer(question, postwar, embedder)).missing == ["king"]


BREAD = [
    hit(
        "L'hydratation est le rapport entre l'eau et la farine. Ce rapport décide de la texture de la mie.", 0
    ),
    hit("Je travaille à 72 % d'hydratation. Cela donne une pâte collante mais facile à façonner.", 1),
]


def test_a_question_in_the_posts_language_is_checked_by_its_own_words(embedder):
    """On a French blog, "Quelle est la capitale de l'Australie ?" quoted the post on dough: its French
    function words ("quelle", "est", "la", "de"), kept by the English lists and found in every French
    passage, made four of its six words "found". Now it asks "capitale" and "australie" (the elided "l'"
    cut), both missing; a question the posts answer still finds "hydratation" in "l'hydratation"."""
    question = "Quelle est la capitale de l'Australie ?"
    verdict = judge(question, BREAD, extract_answer(question, BREAD, embedder))
    assert verdict.missing == ["australie", "capitale"]
    assert not verdict.answer, verdict.reason
    question = "Quelle hydratation utilises-tu pour la pâte ?"
    verdict = judge(question, BREAD, extract_answer(question, BREAD, embedder))
    assert "hydratation" not in verdict.missing and verdict.answer, verdict


def test_function_words_per_language_and_none_for_an_unknown_one():
    from core.text import function_words

    assert {"die", "man"} <= function_words("de") and {"comment", "plus"} <= function_words("fr")
    assert "hand" not in function_words("de") and "table" not in function_words("fr")
    assert function_words("und") == frozenset() and function_words("xx") == frozenset()


def test_stems_join_derived_forms_per_language():
    english = stemmer_for("en")
    assert english("differently") == english("different")
    assert english("criticized") == english("criticism")
    assert english("stove") != english("store")
    assert stemmer_for("de")("Briefe") == stemmer_for("de")("Brief")
    assert stemmer_for("xx") is None and stemmer_for("und") is None


def test_stems_are_right_when_many_readers_ask_at_once():
    """The no-answer gate stems in every reader's thread; a Snowball stemmer shared unguarded gives
    wrong stems and IndexErrors. Distinct words, so the memo cannot hide a race."""
    import threading

    import snowballstemmer

    bases = ["connect", "differ", "critic", "relat", "nation", "happi", "organiz", "general"]
    suffixes = ["ing", "ed", "ations", "ationally", "ness", "ers", "ically", "izing", "ement"]
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [
        f"{b}{x}{y}{s}" for b in bases for x in letters for y in letters for s in suffixes
    ]  # 48,672 words
    reference = snowballstemmer.stemmer("english")
    expected = {w: reference.stemWord(w) for w in words}
    stem = stemmer_for("en")
    wrong: list[str] = []
    errors: list[BaseException] = []

    def run(part: list[str]) -> None:
        try:
            wrong.extend(w for w in part if stem(w) != expected[w])
        except Exception as exc:  # the race shows as IndexError inside the stemmer
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(words[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not wrong, (errors[:1], wrong[:5])


def test_questions_about_the_author_in_the_third_person_are_answered_as_to_her(demo, embedder):
    """The calibration's third-person questions (data/calibration/questions_third_person.jsonl: "Why did
    the blogger quit Instagram?"), asked as readers ask (the bar on the table's floor): the posts say
    "I", and "she" drew a question away from the sentences that answer it; compared without it, 6 of the
    30 are declined (9 before), and of the 12 third-person questions the posts do not answer, 10 still
    are."""
    from core.answer import take_turn

    settings, store = demo
    calibration = ROOT / "data" / "calibration"

    def declined(name: str) -> int:
        lines = (calibration / name).read_text(encoding="utf-8").splitlines()
        texts = [json.loads(line)["text"] for line in lines]
        return sum(take_turn(t, settings, store=store, embedder=embedder).reply.mode == "none" for t in texts)

    assert declined("questions_third_person.jsonl") <= 7
    assert declined("offtopic_third_person.jsonl") >= 10


def test_held_out_questions_in_other_words_are_answered(asked):
    """Questions written apart from the demo set and the thresholds (heldout.jsonl) whose words the posts
    hold in other forms ("differently"/"different", "didn't"): refused before words were compared by
    stem and compound, answered now."""
    held = {q["id"]: q for q in map(json.loads, (EVAL / "heldout.jsonl").read_text().splitlines())}
    for qid in ("h5", "h12"):
        hits, answer = asked(held[qid]["text"])
        verdict = judge(held[qid]["text"], hits, answer)
        assert verdict.answer, (qid, verdict.reason, verdict.missing, round(verdict.similarity, 3))


def test_the_rest_of_a_section_cut_in_two_counts_as_relevant_as_its_best_part(asked):
    """h9's evidence ("Below it I write, at most, three things…") is in a later chunk of the essay
    than the one the search ranks first: every chunk counts as relevant as the best chunk of its
    section (here: the whole untitled essay)."""
    held = {q["id"]: q for q in map(json.loads, (EVAL / "heldout.jsonl").read_text().splitlines())}
    hits, _ = asked(held["h9"]["text"])
    assert len({h.post_id for h in hits}) < len(hits)  # some post has several chunks among the hits
    read = hits[: extractive.MAX_HITS]
    for hit, value in zip(read, extractive._section_relevance(read), strict=True):
        same = [h.relevance for h in read if (h.post_id, h.section) == (hit.post_id, hit.section)]
        assert value == max(same) >= hit.relevance


def test_no_hits_means_no_answer_and_no_suggestions(embedder):
    answer = extract_answer("Why did she start the blog?", [], embedder)
    assert answer.empty and answer.text == ""
    verdict = judge("Why did she start the blog?", [], answer)
    assert not verdict.answer and verdict.suggestions == []
    assert "haven't written about that" in NO_ANSWER_MESSAGE


def test_suggestions_are_the_closest_posts(asked):
    hits, _ = asked("What is the capital of Australia?")
    posts = suggest(hits)
    assert 1 <= len(posts) <= 3
    assert len({p.post_id for p in posts}) == len(posts)
    assert [p.relevance for p in posts] == sorted((p.relevance for p in posts), reverse=True)


def test_the_fast_path_never_calls_a_language_model(asked, embedder, monkeypatch):
    import core.llm.builtin
    import core.llm.client

    def refuse(*args, **kwargs):
        raise AssertionError("a language model was called")

    for name in ("chat", "stream_chat", "make_client", "openai_client"):
        monkeypatch.setattr(core.llm.client, name, refuse)
    monkeypatch.setattr(core.llm.builtin, "get_builtin_server", refuse)
    q = QUESTIONS["q10"]
    hits, _ = asked(q["text"])
    answer = extract_answer(q["text"], hits, embedder)
    assert judge(q["text"], hits, answer).answer
    assert answer.sentences


def test_the_answer_modules_do_not_even_import_a_model_client():
    """Quoting and the relevance bar need no chat model: neither module imports one (the package's
    __init__ does, for the generative path, so this reads the modules' own imports)."""
    import ast

    clients = ("core.llm", "core.answer.generate", "core.answer.reply", "openai", "xllamacpp")
    for name in ("extractive", "abstain"):
        tree = ast.parse((ROOT / "core" / "answer" / f"{name}.py").read_text())
        imported = {
            node.module if isinstance(node, ast.ImportFrom) else alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        assert not [m for m in imported if m and m.startswith(clients)], (name, imported)


def test_a_question_in_another_language_than_a_german_blog_is_told_it_cannot_be_read(embedder):
    # An English reader asking a German blog (MiniLM, as static mode needs) how the author got into
    # beekeeping was told "I haven't written about that", though a post is about just that: only English
    # posts got "I can't read questions in this language yet", and that said "please ask in English".
    from core.answer import reply
    from core.answer.reply import CANNOT_READ_OTHER

    hits = [
        hit("Vor sechs Jahren stand plötzlich ein Schwarm in unserem Apfelbaum. Das hat mich damals völlig "
            "fasziniert, und im Herbst meldete ich mich beim Imkerverein an.", 0, "anfang", "Wie ich zur Imkerei kam"),
        hit("Bienen zwingen einen zur Geduld. Diese Geduld fehlte mir vorher in fast allem, und deshalb "
            "imkere ich bis heute.", 1, "anfang", "Wie ich zur Imkerei kam"),
    ]  # fmt: skip
    settings = Settings.load({"answer_mode": "extractive"}, environ={})
    told = reply("How did you get into beekeeping?", hits, settings, embedder)
    assert told.mode == "none" and told.text == CANNOT_READ_OTHER["en"]
    assert "language my posts are written in" in told.text and "English posts" not in told.owner_note
    italian = reply("Come hai iniziato con le api?", hits, settings, embedder)
    assert italian.text == CANNOT_READ_OTHER["it"] and "lingua dei miei post" in italian.text
    # "tell me more" searches that question again: no more readable ("I haven't written about that")
    more = reply(
        "tell me more", hits, settings, embedder, query="How did you get into beekeeping?", follow_up="more"
    )
    assert more.mode == "none" and more.text == CANNOT_READ_OTHER["en"]


def test_a_question_translated_first_is_answered_and_one_not_translated_is_told_the_language(demo, embedder):
    from core.answer import reply
    from core.answer.reply import CANNOT_READ

    settings, store = demo
    settings = settings.replace(answer_mode="extractive")
    turkish = "Yazar sosyal medya hakkında ne düşünüyor ve Instagram'ı neden bıraktı?"
    hits = search(turkish, settings, store=store, embedder=embedder).hits
    untranslated = reply(turkish, hits, settings, embedder)
    assert untranslated.mode == "none" and untranslated.text == CANNOT_READ["tr"]
    japanese = "ブログを始めた理由は何ですか？"  # a language with replies but no record: told in Japanese
    told = reply(
        japanese, search(japanese, settings, store=store, embedder=embedder).hits, settings, embedder
    )
    assert (
        told.mode == "none"
        and told.text == CANNOT_READ["ja"] == "まだ日本語の質問は読めません。英語で質問してください。"
    )
    english = "What does the author think about social media, and why did she leave Instagram?"
    found = search(english, settings, store=store, embedder=embedder).hits
    translated = reply(turkish, found, settings, embedder, query=english)
    assert translated.mode == "extractive" and not translated.owner_note


def test_tell_me_more_after_a_question_the_table_cannot_read_says_so_again(demo, embedder):
    """ "Tell me more" after a Turkish question an English-only table cannot read searches that question
    again: it was told "I haven't written about that" (a guess, about a topic the blog covers) since the
    check looked only at "tell me more", not at what was searched."""
    from core.answer.reply import CANNOT_READ
    from core.answer.turn import take_turn

    settings, store = demo
    settings = settings.replace(answer_mode="extractive", translate_question=False)
    turkish = "Yazar sosyal medya hakkında ne düşünüyor ve Instagram'ı neden bıraktı?"
    first = take_turn(turkish, settings, store=store, embedder=embedder)
    text = "".join(first.reply)
    assert first.reply.mode == "none" and text == CANNOT_READ["tr"]
    history = [{"role": "user", "content": turkish}, {"role": "assistant", "content": text}]
    more = take_turn("tell me more", settings, store=store, embedder=embedder, history=history)
    "".join(more.reply)
    assert more.reply.mode == "none" and more.reply.text == CANNOT_READ["tr"], more.reply.text
    assert more.reply.owner_note  # and the owner is told how to let the blog read Turkish
