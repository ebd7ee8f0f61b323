"""core.answer: prompt, context formatting and budget, streaming answers (scripted server and, marked
llm, the built-in model), question translation and follow-up rewriting."""

from __future__ import annotations

import pytest

from core.answer import (
    NO_HITS_MESSAGE,
    AnswerStream,
    answer,
    check_grounding,
    rewrite_followup,
    translate_to_english,
)
from core.answer.generate import (
    DEFAULT_PROMPT_TEMPLATE,
    build_messages,
    context_budget,
    fit_context,
    format_hit,
    sources_of,
    system_prompt,
)
from core.answer.question import looks_english
from core.config import Settings
from core.llm import LLMError, get_builtin_server
from core.models import Hit
from core.text import count_tokens, split_sentences
from tests.servers import ScriptedOpenAIServer

AUTHOR = {
    "author_name": "Maya Lindqvist",
    "author_description": "a baker who writes about sourdough and Lisbon",
}


def hit(
    post_id: str,
    relevance: float,
    text: str = "Some text.",
    *,
    title: str = "",
    section: str = "",
    n: int = 0,
):
    return Hit(
        post_id=post_id,
        title=title or f"Post {post_id}",
        collection="writings",
        chunk_id=f"{post_id}-{n}",
        section=section,
        text=text,
        keywords=[],
        relevance=relevance,
        rank=n + 1,
    )


def remote(server: ScriptedOpenAIServer, **changes) -> Settings:
    return Settings(openai_base_url=server.base_url, max_retries=1, request_timeout=5.0, **AUTHOR).replace(
        **changes
    )


# Prompt and context ---------------------------------------------------------------------------------------


def test_system_prompt_fills_in_the_author():
    prompt = system_prompt(Settings(**AUTHOR))
    assert prompt.startswith("You are Maya Lindqvist, a baker who writes about sourdough and Lisbon.")
    for rule in (
        "first person",
        "ONLY the provided excerpts",
        "say so plainly",
        "at most two posts",
        "language",
    ):
        assert rule in prompt
    assert "{" not in prompt


def test_system_prompt_template_override():
    prompt = system_prompt(
        Settings(**AUTHOR), "Speak as {author_name} ({author_description}). Keep {braces}."
    )
    assert prompt == "Speak as Maya Lindqvist (a baker who writes about sourdough and Lisbon). Keep {braces}."
    assert "{author_name}" in DEFAULT_PROMPT_TEMPLATE


def test_context_format():
    """Tagged excerpts, the post on the opening tag, no relevance numbers (the order is the rank)."""
    assert format_hit(hit("a", 0.81234, "Bread is patience.", title="On Bread")) == (
        '<excerpt post="On Bread">\nBread is patience.\n</excerpt>'
    )
    assert format_hit(hit("a", 0.5, "x", title='On "Bread" & <Salt>', section="Starters")) == (
        '<excerpt post="On &quot;Bread&quot; &amp; &lt;Salt&gt; — Starters">\nx\n</excerpt>'
    )
    hits = [hit("a", 0.3, "Third."), hit("b", 0.9, "First."), hit("c", 0.6, "Second.")]
    messages, used = build_messages("Why bake?", hits, Settings(**AUTHOR))
    assert [h.post_id for h in used] == ["b", "c", "a"]
    user = messages[-1]["content"]
    expected = (
        '<excerpt post="Post b">\nFirst.\n</excerpt>\n\n'
        '<excerpt post="Post c">\nSecond.\n</excerpt>\n\n'
        '<excerpt post="Post a">\nThird.\n</excerpt>'
    )
    assert expected in user
    assert "relevance" not in user and "0.9" not in user
    assert user.endswith("Why bake?")
    assert messages[0] == {"role": "system", "content": system_prompt(Settings(**AUTHOR))}
    assert [m["role"] for m in messages] == ["system", "user"]


def test_budget_trims_to_best_hits():
    long_text = "I knead the dough every morning before the city wakes up. " * 40  # ~500 tokens
    hits = [hit(f"p{i}", 0.9 - i * 0.01, long_text, n=i) for i in range(30)]
    hits.reverse()  # the order given must not matter
    context, used = fit_context(hits, 2000)
    assert 2 <= len(used) < 30
    assert count_tokens(context) <= 2000
    assert [h.post_id for h in used] == [f"p{i}" for i in range(len(used))]
    assert context.count("<excerpt ") == context.count("</excerpt>") == len(used)

    _, used2 = build_messages("q", hits, Settings(context_token_budget=2000))
    assert used2 == used


def test_single_oversized_hit_is_cut_to_fit():
    huge = hit("big", 0.9, "word " * 5000, title="Huge")
    context, used = fit_context([huge, hit("small", 0.5, "tiny")], 300)
    assert used == [huge]
    assert context.startswith('<excerpt post="Huge">\nword word') and context.endswith(" …\n</excerpt>")
    assert count_tokens(context) <= 300


def test_context_budget_defaults():
    assert context_budget(Settings()) == 1200  # built-in, 8192 context: capped (uncapped it would be 2683)
    assert context_budget(Settings(local_context=4096, max_tokens=500)) == int((4096 - 500 - 1000) / 2.3)
    assert context_budget(Settings(local_context=2048, max_tokens=1000)) == 300  # the floor
    assert context_budget(Settings(openai_api_key="sk-x")) == 12000
    assert context_budget(Settings(openai_base_url="http://localhost:1/v1", context_token_budget=777)) == 777


def test_history_is_kept_and_counted():
    history = [
        {"role": "user", "content": "Do you bake every day?"},
        {"role": "assistant", "content": "Almost every day."},
        {"role": "system", "content": "ignored"},
    ]
    messages, _ = build_messages("Even on Sundays?", [hit("a", 0.9)], Settings(), history)
    assert messages[1:3] == history[:2]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]


def test_sources_are_distinct_posts_by_best_relevance():
    hits = [hit("a", 0.5, n=0), hit("b", 0.7, n=0), hit("a", 0.9, n=1), hit("c", 0.2), hit("b", 0.1, n=2)]
    sources = sources_of(hits)
    assert [(s.post_id, s.relevance) for s in sources] == [("a", 0.9), ("b", 0.7), ("c", 0.2)]
    assert sources[0].title == "Post a"


# Answers --------------------------------------------------------------------------------------------------


def test_no_hits_means_no_model_call(scripted: ScriptedOpenAIServer):
    stream = answer("What about whales?", [], remote(scripted))
    assert list(stream) == [NO_HITS_MESSAGE]
    assert stream.text == NO_HITS_MESSAGE
    assert stream.used_hits == [] and stream.sources == []
    assert not stream.called_model
    assert scripted.requests == []


def test_answer_streams_from_the_model(scripted: ScriptedOpenAIServer):
    reply = ["I bake ", "because ", "it slows ", "me down."]
    scripted.chat(reply)
    hits = [
        hit("slow", 0.62, "Baking slows me down.", title="Slow Mornings", n=0),
        hit("lisbon", 0.81, "Lisbon taught me bread.", title="Lisbon Bread", n=0),
        hit("slow", 0.95, "Every loaf takes a day.", title="Slow Mornings", n=1),
        hit("tools", 0.4, "My oven is old.", title="Tools", n=0),
    ]
    settings = remote(scripted, chat_model="llama3")
    stream = answer("Why do you bake?", hits, settings)
    assert isinstance(stream, AnswerStream)
    assert [s.post_id for s in stream.sources] == ["slow", "lisbon", "tools"]
    assert [h.relevance for h in stream.used_hits] == [0.95, 0.81, 0.62, 0.4]
    assert stream.model_label == f"llama3 via {scripted.base_url}"
    assert stream.builtin is False
    assert scripted.requests == []  # nothing is sent before iterating

    assert list(stream) == ["I bake because it slows me down."]  # whole sentences
    assert stream.text == stream.raw_text == "".join(reply)
    assert stream.done and not stream.truncated and stream.cut == "" and stream.leaks == []
    assert stream.grounding is None  # no embedder given
    [request] = scripted.requests
    body = request.body
    assert body["stream"] is True
    assert body["model"] == "llama3"
    assert (body["temperature"], body["max_tokens"]) == (0.4, 1000)
    assert body["messages"][0]["content"].startswith("You are Maya Lindqvist")
    assert (
        '<excerpt post="Slow Mornings">\nEvery loaf takes a day.\n</excerpt>'
        in body["messages"][-1]["content"]
    )
    assert list(stream) == [stream.text]  # replay, no second request
    assert len(scripted.requests) == 1


def test_answer_error_surfaces_as_llm_error(scripted: ScriptedOpenAIServer):
    scripted.error(500, "boom", times=2)
    stream = answer("Why?", [hit("a", 0.9)], remote(scripted))
    with pytest.raises(LLMError, match=r"500"):
        list(stream)
    assert stream.text == ""


@pytest.mark.llm
def test_answer_round_trip_with_builtin_model():
    settings = Settings(max_tokens=24, **AUTHOR)
    get_builtin_server(settings)
    hits = [
        hit("lisbon", 0.8, "I moved to Lisbon in 2015 and opened a small bakery in Alfama.", title="Moving")
    ]
    stream = answer("Where did you open your bakery?", hits, settings)
    assert stream.builtin is True
    assert stream.model_label.startswith("built-in")
    deltas = list(stream)
    assert deltas and all(isinstance(d, str) for d in deltas)
    assert stream.text == "".join(deltas)
    assert stream.text.strip()
    assert stream.usage.completion_tokens > 0
    assert [s.post_id for s in stream.sources] == ["lisbon"]


# Translation and follow-ups -------------------------------------------------------------------------------


def test_looks_english():
    assert looks_english("What do you think about Lisbon?")
    assert looks_english("Tell me about your dog’s favourite walk")
    assert not looks_english("¿Qué piensas de Lisboa?")
    assert not looks_english("Was denkst du über Berlin?")
    assert not looks_english("Wat is het verschil tussen brood en cake")
    assert not looks_english("Que penses-tu de Paris ?")


def test_translate_skips_english(scripted: ScriptedOpenAIServer):
    question = "What do you think about sourdough?"
    assert translate_to_english(question, remote(scripted)) == question
    assert scripted.requests == []


def test_translate_calls_the_model_for_other_languages(scripted: ScriptedOpenAIServer):
    scripted.chat('"What do you think about Lisbon?"')
    question = "Que penses-tu de Lisbonne ?"
    assert translate_to_english(question, remote(scripted)) == "What do you think about Lisbon?"
    [request] = scripted.requests
    assert request.body["messages"][-1] == {"role": "user", "content": question}
    assert "English" in request.body["messages"][0]["content"]
    assert request.body["temperature"] == 0
    assert "stream" not in request.body or request.body["stream"] is False


def test_translate_failure_raises(scripted: ScriptedOpenAIServer):
    scripted.error(401, "no")
    with pytest.raises(LLMError):
        translate_to_english("Was denkst du?", remote(scripted))


def test_rewrite_followup(scripted: ScriptedOpenAIServer):
    settings = remote(scripted)
    assert rewrite_followup("And in winter?", [], settings) == "And in winter?"
    assert scripted.requests == []

    history = [
        {"role": "user", "content": "How often do you feed your starter?"},
        {"role": "assistant", "content": "Twice a day in summer."},
    ]
    scripted.chat("How often do you feed your starter in winter?")
    assert (
        rewrite_followup("And in winter?", history, settings)
        == "How often do you feed your starter in winter?"
    )
    [request] = scripted.requests
    prompt = request.body["messages"][-1]["content"]
    assert "How often do you feed your starter?" in prompt
    assert "Twice a day in summer." in prompt
    assert "And in winter?" in prompt


def test_rewrite_followup_with_builtin_model_needs_no_call():
    history = [{"role": "user", "content": "How often do you feed your starter?"}]
    rewritten = rewrite_followup("And in winter?", history, Settings())
    assert rewritten == "How often do you feed your starter? And in winter?"


def test_a_standalone_followup_costs_no_model_call(scripted: ScriptedOpenAIServer) -> None:
    history = [
        {"role": "user", "content": "How often do you feed your starter?"},
        {"role": "assistant", "content": "Twice a day in summer."},
    ]
    settings = Settings(openai_base_url=scripted.base_url, max_retries=0)
    standalone = "What flour do you use for rye bread, and where do you buy it?"
    assert rewrite_followup(standalone, history, settings) == standalone
    assert scripted.requests == []
    scripted.chat("How often do you feed your starter in winter?")
    assert rewrite_followup("And in winter?", history, settings) == (
        "How often do you feed your starter in winter?"
    )
    assert len(scripted.requests) == 1


# Safer answers: leaked prompt markup, length cuts, strict grounding -------------------------------------------

TABLE = "Build Log: A White Oak Trestle Table for Eight"
SAWMILL = [
    "I buy almost all my wood at Dunmore Brothers Sawmill in Pelham Falls, a family yard that air-dries "
    "its lumber in open sheds.",
    "Before I buy a board I sight down its edge for twist and check the end grain for checks and pith.",
]
CLEAN = "I finished the table with three coats of Danish oil.\n\nThe oil took a week to cure."


def table_hits() -> list[Hit]:
    return [
        hit(
            "table",
            0.7692,
            "I finished the table with three coats of Danish oil.",
            title=TABLE,
            section="Finish",
        ),
        hit(
            "table", 0.71, "The oil took a week to cure in the cold shop.", title=TABLE, section="Finish", n=1
        ),
    ]


def sawmill_hits() -> list[Hit]:
    return [
        hit("boards", 0.8, text, title="Choosing Boards at the Sawmill", n=i)
        for i, text in enumerate(SAWMILL)
    ]


LEAKED = {
    "old header": f"[{TABLE} — Finish | relevance=0.7692]\nI finished the table with three coats of Danish oil.\n\n"
    f"[{TABLE} — Finish | relevance=0.7100]\nThe oil took a week to cure.",
    "old header inline": f"I finished the table with three coats of Danish oil [{TABLE} — Finish | relevance=0.7692]."
    "\n\nThe oil took a week to cure (relevance=0.71).",
    "tags": f'<excerpt post="{TABLE} — Finish">\nI finished the table with three coats of Danish oil.\n</excerpt>\n\n'
    "The oil took a week to cure.</excerpt>",
    "labels": f"Excerpts from my writings:\n\nExcerpt 1\nPost: {TABLE} — Finish\n"
    "I finished the table with three coats of Danish oil.\n\nExcerpt 2: The oil took a week to cure.",
    "bold labels": f"**Excerpt 1:** I finished the table with three coats of Danish oil.\n\n**Title:** {TABLE}\n"
    "The oil took a week to cure.",
    "header line": f"{TABLE} — Finish\nI finished the table with three coats of Danish oil.\n\n"
    "The oil took a week to cure.",
}


@pytest.mark.parametrize("size", [1, 3, 7, 10_000])
@pytest.mark.parametrize("kind", LEAKED)
def test_copied_prompt_markup_never_reaches_the_reader(scripted: ScriptedOpenAIServer, kind, size):
    """Headers of the old and the new format, labels and tags, whole or split across deltas anywhere."""
    from tests.servers import split_every

    scripted.chat(split_every(LEAKED[kind], size))
    stream = answer("How did you finish the table?", table_hits(), remote(scripted))
    pieces = list(stream)
    assert stream.text == "".join(pieces) == CLEAN
    for piece in pieces:
        for mark in ("relevance", "0.7", "<", ">", "xcerpt", "[", "Post:", "Title", "Finish\n"):
            assert mark not in piece
    assert stream.leaks and stream.raw_text == LEAKED[kind]


def test_an_answer_without_markup_is_unchanged(scripted: ScriptedOpenAIServer, embedder):
    """Whitespace, lists, links, tags and markdown stay as the model wrote them, in both grounding modes
    when every sentence is supported; only the pieces are whole sentences."""
    from tests.servers import split_every

    supported = (
        "I finished the table with **three coats** of Danish oil.\n\nWhat I did:\n\n"
        "1. I finished the table with Danish oil.\n2. The oil took a week to cure in the cold shop.\n\n"
        "The oil took a week to cure"
    )
    linked = (
        "I finished it with oil [REF: finishing], see [my post](https://example.com/table) (the last one)."
    )
    for text, grounding in ((supported, "check"), (supported, "strict"), (linked, "check")):
        scripted.chat(split_every(text, 4))
        settings = remote(scripted, grounding=grounding)
        stream = answer("How did you finish the table?", table_hits(), settings, embedder=embedder)
        pieces = list(stream)
        assert "".join(pieces) == stream.text == text, grounding
        assert stream.leaks == [] and stream.dropped == [] and not stream.truncated
        if text == supported:
            assert pieces[:3] == [
                "I finished the table with **three coats** of Danish oil.",
                "\n\nWhat I did:",
                "\n\n1. I finished the table with Danish oil.",
            ]
            assert stream.grounding.supported_fraction == 1.0


@pytest.mark.parametrize("size", [2, 5, 10_000])
def test_an_answer_cut_at_max_tokens_ends_at_its_last_complete_sentence(scripted: ScriptedOpenAIServer, size):
    from tests.servers import split_every

    reply = "I finished the table with three coats of Danish oil. The oil took a week to cure, and then I wax"
    scripted.chat(split_every(reply, size), finish_reason="length")
    stream = answer("How did you finish the table?", table_hits(), remote(scripted))
    pieces = list(stream)
    assert pieces == ["I finished the table with three coats of Danish oil."]
    assert stream.text == pieces[0] and stream.truncated
    assert stream.cut == "The oil took a week to cure, and then I wax"
    assert not any("wax" in p or "cure" in p for p in pieces)


@pytest.mark.parametrize(("reason", "truncated"), [("length", True), ("stop", False)])
def test_answer_cut_off_by_the_token_limit_is_flagged(reason, truncated):
    from tests.servers import Reply, chat_chunks

    with ScriptedOpenAIServer() as server:
        deltas = ["I started the blog in 2019.", " I wanted", " to write because"]
        server.push(Reply(events=chat_chunks(deltas, finish_reason=reason)))
        settings = Settings(openai_base_url=server.base_url, max_retries=0)
        stream = answer("Why?", [hit("p", 0.9, "I started the blog in 2019.")], settings)
        text = "".join(stream)
    assert stream.truncated is truncated
    if truncated:
        assert (
            text == stream.text == "I started the blog in 2019." and stream.cut == "I wanted to write because"
        )
    else:
        assert (
            text == stream.text == "I started the blog in 2019. I wanted to write because"
            and stream.cut == ""
        )


def test_a_reply_cut_before_its_first_sentence_ends_says_so(scripted: ScriptedOpenAIServer):
    from core.answer.generate import CUT_SHORT_MESSAGE

    scripted.chat(
        ["[Build Log | relevance=0.77]\n", "I started", " the blog because"], finish_reason="length"
    )
    stream = answer("Why?", [hit("p", 0.9, "I started the blog in 2019.")], remote(scripted))
    assert list(stream) == [CUT_SHORT_MESSAGE] and stream.text == CUT_SHORT_MESSAGE
    assert stream.cut == "I started the blog because" and stream.truncated


INVENTED = (
    "I buy almost all my wood at Dunmore Brothers Sawmill in Pelham Falls. "
    "Before that I bought my lumber from Oakridge Timber in Burlington for twelve years. "
    "It cost $4,000. "
    "I sight down the edge of every board for twist and check the end grain for pith."
)


def test_check_mode_shows_invented_details_and_lists_them_as_unsupported(
    scripted: ScriptedOpenAIServer, embedder
):
    scripted.chat(INVENTED)
    settings = remote(scripted, grounding="check")
    stream = answer("Where do you buy wood?", sawmill_hits(), settings, embedder=embedder)
    assert "".join(stream) == stream.text == INVENTED  # check mode: shown, then listed
    assert stream.dropped == []
    grounding = stream.grounding
    assert grounding.to_json() == check_grounding(stream.text, stream.used_hits, embedder).to_json()
    [invented] = grounding.unsupported
    assert invented.sentence.startswith("Before that I bought my lumber from Oakridge Timber")
    assert invented.unknown_details == ["12", "burlington", "oakridge", "timber"]
    assert grounding.summary() == "2 of 3 sentences supported by the excerpts (1 more too short to check)"


@pytest.mark.parametrize("grounding", ["strict", "auto"])
@pytest.mark.parametrize("size", [3, 10_000])
def test_strict_mode_drops_invented_names_and_numbers_before_the_reader_sees_them(
    scripted: ScriptedOpenAIServer, embedder, size, grounding
):
    """Strict mode, and auto (the default) wherever the check can judge."""
    from tests.servers import split_every

    scripted.chat(split_every(INVENTED, size))
    settings = remote(scripted, grounding=grounding)
    stream = answer("Where do you buy wood?", sawmill_hits(), settings, embedder=embedder)
    pieces = list(stream)
    kept = (
        "I buy almost all my wood at Dunmore Brothers Sawmill in Pelham Falls. "
        "I sight down the edge of every board for twist and check the end grain for pith."
    )
    assert "".join(pieces) == stream.text == kept
    for invented in ("Oakridge", "Burlington", "twelve", "4,000"):
        assert not any(invented in p for p in pieces)
    dropped = {s.sentence: s for s in stream.dropped}
    assert list(dropped) == [
        "Before that I bought my lumber from Oakridge Timber in Burlington for twelve years.",
        "It cost $4,000.",
    ]
    assert dropped["It cost $4,000."].unknown_details == ["4000"]  # too short to judge, but a number
    assert not dropped["It cost $4,000."].judged
    assert (
        stream.grounding.summary() == "2 of 3 sentences supported by the excerpts (1 more too short to check)"
    )
    assert [s.sentence for s in stream.grounding.sentences] == [s.strip() for s in split_sentences(INVENTED)]


@pytest.mark.parametrize("grounding", ["strict", "auto"])
def test_strict_mode_with_nothing_supported_says_so_instead(
    scripted: ScriptedOpenAIServer, embedder, grounding
):
    from core.answer.generate import NOTHING_SUPPORTED_MESSAGE

    scripted.chat("My favourite football team is Manchester United and I watch every match on television.")
    settings = remote(scripted, grounding=grounding)
    stream = answer("Where do you buy wood?", sawmill_hits(), settings, embedder=embedder)
    assert list(stream) == [NOTHING_SUPPORTED_MESSAGE] and stream.text == NOTHING_SUPPORTED_MESSAGE
    assert len(stream.dropped) == 1 and stream.grounding.supported_fraction == 0.0


@pytest.mark.parametrize("grounding", ["strict", "auto"])
def test_an_answer_the_check_cannot_read_is_never_shown_unchecked(
    scripted: ScriptedOpenAIServer, embedder, grounding
):
    """A German answer over an English-only model: strict and auto show none of it."""
    from core.answer.generate import NOTHING_SUPPORTED_MESSAGE

    scripted.chat("Ich kaufe fast mein ganzes Holz bei der Sägemühle Dunmore Brothers in Pelham Falls.")
    stream = answer(
        "Where do you buy wood?", sawmill_hits(), remote(scripted, grounding=grounding), embedder=embedder
    )
    assert list(stream) == [NOTHING_SUPPORTED_MESSAGE] and stream.declined
    assert stream.grounding.skipped.startswith("the answer is in German")


def test_auto_grounding_quotes_the_author_instead_of_generating_what_it_could_not_check(
    scripted: ScriptedOpenAIServer, embedder
):
    """Asked in German over an English-only model, auto quotes the author's own sentences and calls no
    model; check generates (and says it was not checked)."""
    from core.answer import reply

    question = "Wo kaufst du dein Holz, bei Dunmore Brothers in Pelham Falls?"
    auto = reply(question, sawmill_hits(), remote(scripted), embedder, mode="generative")
    assert auto.mode == "extractive" and auto.quotes
    assert all(any(q.text in text for text in SAWMILL) for q in auto.quotes)  # verbatim
    assert "".join(auto) == auto.text and scripted.chat_requests == []
    scripted.chat("Ich kaufe mein Holz bei Dunmore Brothers in Pelham Falls.")
    checked = reply(
        question, sawmill_hits(), remote(scripted, grounding="check"), embedder, mode="generative"
    )
    assert (
        checked.mode == "generative"
        and "".join(checked) == "Ich kaufe mein Holz bei Dunmore Brothers in Pelham Falls."
    )
    assert checked.grounding.skipped.startswith("the answer is in German")
    # An English question over the same hits is generated (and checked) as before.
    scripted.chat(SAWMILL[0])
    english = reply("Where do you buy wood?", sawmill_hits(), remote(scripted), embedder, mode="generative")
    assert english.mode == "generative" and "".join(english) == SAWMILL[0]


@pytest.mark.parametrize(
    ("reply", "auto_shows"),
    [
        ("Dunmore sells it.", True),  # too short to judge, its name in the excerpts
        ("It was $40.", False),  # a price no excerpt gives
    ],
)
def test_a_short_answer_needs_known_details_in_auto_mode_and_a_judged_sentence_in_strict(
    scripted: ScriptedOpenAIServer, embedder, reply, auto_shows
):
    from core.answer.generate import NOTHING_SUPPORTED_MESSAGE

    for grounding in ("auto", "strict"):
        scripted.chat(reply)
        stream = answer(
            "Who sells you wood?", sawmill_hits(), remote(scripted, grounding=grounding), embedder=embedder
        )
        shown = "".join(stream)
        expected = reply if grounding == "auto" and auto_shows else NOTHING_SUPPORTED_MESSAGE
        assert shown == stream.text == expected, grounding
        assert [s.sentence for s in stream.dropped] == ([] if shown == reply else [reply])


def test_strict_grounding_is_a_validated_setting_that_needs_the_embedder(scripted: ScriptedOpenAIServer):
    from core.config import ConfigError

    assert Settings.load(environ={}).grounding == "auto"
    assert Settings.load(environ={"INKWELL_GROUNDING": "strict"}).grounding == "strict"
    with pytest.raises(ConfigError, match="grounding must be one of auto, check, strict, not 'lenient'"):
        Settings.load(environ={"INKWELL_GROUNDING": "lenient"})
    with pytest.raises(ValueError, match="needs the embedder"):
        answer("Why?", [hit("p", 0.9)], remote(scripted, grounding="strict"))
    # Auto without an embedder has nothing to judge with: it shows the answer, unchecked, as check does.
    scripted.chat("I started the blog in 2019.")
    stream = answer("Why?", [hit("p", 0.9, "I started the blog in 2019.")], remote(scripted))
    assert "".join(stream) == "I started the blog in 2019." and stream.grounding is None
