"""Collections routing: the rules file, the similarity router on a tiny real corpus (real embedder, real
LanceDB), the CLI, and the chat and ingest pages through AppTest (answers from the scripted OpenAI server)."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from core.cli import main
from core.config import Settings
from core.embed import embed_query
from core.ingest import ingest_posts
from core.models import Block, Post
from core.search import Route, RulesError, load_rules, route, route_and_search, rules_path, save_rules
from core.search.route import ROUTE_MARGIN, collection_vectors, decide, parse_rules
from core.store import Store
from tests.conftest import CountingEmbedder, isolate_app, open_app

POSTS = {
    "garden": {
        "tomatoes": "I grow six kinds of tomatoes against the south wall of the garden. The Brandywines split "
        "in wet Augusts, so I water them less once the fruit sets.",
        "compost": "The compost heap takes all kitchen scraps except citrus peel. I turn it every two weeks "
        "with a fork and it is ready by spring.",
        "pruning": "I prune the apple trees in February, when they are dormant: crossing branches first, then "
        "anything growing inward.",
    },
    "trains": {
        "sleeper": "I took the night train from Vienna to Rome in 2019. The sleeper cabin had three bunks and "
        "the conductor brought coffee at dawn.",
        "timetables": "Railway timetables are my favourite reading: every connection at every station, the "
        "whole network of trains on one page.",
        "stations": "Antwerp Central station has a dome like a cathedral; the platforms for the trains sit "
        "under an iron and glass roof.",
    },
}
CLEAR = "When should I prune my apple trees?"  # garden by a wide margin
AMBIGUOUS = "What happened in 2019?"  # no collection clearly closer
WEAK = "Tell me about the wall"  # closer to trains, but not clearly (margin ≈ 0.17)


# Fixtures ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """The two-collection corpus, ingested once; tests get a copy (they write rules files)."""
    data_dir = tmp_path_factory.mktemp("route") / "db"
    settings = Settings.load({"data_dir": data_dir}, environ={})
    posts = [
        Post(
            post_id, post_id.title(), [Block(text)], raw=text, source=f"{post_id}.txt", collection=collection
        )
        for collection, texts in POSTS.items()
        for post_id, text in texts.items()
    ]
    report = ingest_posts(posts, settings, store=Store(data_dir), embedder=embedder)
    assert report.ok and report.count("new") == 6
    return data_dir


@pytest.fixture
def data_dir(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "db"
    shutil.copytree(built, copy)
    return copy


@pytest.fixture
def routed(data_dir: Path) -> tuple[Settings, Store]:
    return Settings.load({"data_dir": data_dir}, environ={}), Store(data_dir)


def write_rules(data_dir: Path, text: str) -> None:
    rules_path(data_dir).write_text(text, encoding="utf-8")


# Rules file ----------------------------------------------------------------------------------------------


def test_rules_parse_and_match_whole_words_and_plurals():
    rules, problems = parse_rules(
        'margin = 0.2\n[garden]\nkeywords = ["tomato", "Compost heap", "art"]\n[trains]\nkeywords = []\n',
        ["garden", "trains"],
    )
    assert problems == [] and rules.margin == 0.2
    assert rules.keywords == {"garden": ("tomato", "Compost heap", "art")}
    assert rules.matches("Which TOMATOES split?") == {"garden": ["tomato"]}
    assert rules.matches("How big is the compost  heap?") == {"garden": ["Compost heap"]}
    assert rules.matches("When did you start?") == {}  # 'art' inside 'start' is not the word art


def test_rules_errors_are_clear_and_keep_the_valid_part():
    _, problems = parse_rules('[garden\nkeywords = ["x"]', ["garden"])
    assert len(problems) == 1 and problems[0].startswith("not valid TOML: ") and "line 1" in problems[0]

    text = (
        'margin = "wide"\nfoo = 1\n[gardn]\nkeywords = ["tomato"]\n[trains]\nkeywords = "sleeper"\n'
        '[garden]\nkeywords = ["compost"]\nweight = 2\n'
    )
    rules, problems = parse_rules(text, ["garden", "trains"])
    assert problems == [
        "margin must be a number between 0 and 1, not 'wide'",
        "'foo' is not a [collection] table (the only top-level setting is margin)",
        "[gardn]: no such collection (collections: garden, trains)",
        '[trains]: keywords must be a list of strings, like keywords = ["sawmill"]',
        "[garden]: unknown key weight (only keywords = [...] is read)",
    ]
    assert rules.keywords == {} and rules.margin is None

    good, problems = parse_rules(
        '[gardn]\nkeywords = ["x"]\n[trains]\nkeywords = ["rail"]\n', ["garden", "trains"]
    )
    assert len(problems) == 1 and good.keywords == {"trains": ("rail",)}


def test_save_refuses_an_invalid_file_and_keeps_the_old_one(tmp_path: Path):
    save_rules(tmp_path, '[garden]\nkeywords = ["tomato"]\n', ["garden"])
    with pytest.raises(RulesError, match=r"\[books\]: no such collection"):
        save_rules(tmp_path, '[books]\nkeywords = ["novel"]\n', ["garden"])
    with pytest.raises(RulesError, match="not valid TOML"):
        save_rules(tmp_path, "[garden", ["garden"])
    assert rules_path(tmp_path).read_text() == '[garden]\nkeywords = ["tomato"]\n'
    assert load_rules(tmp_path, ["garden"])[0].keywords == {"garden": ("tomato",)}
    assert load_rules(tmp_path / "none", ["garden"]) == (load_rules(tmp_path / "none")[0], [])


# The decision --------------------------------------------------------------------------------------------


def test_decide_rule_beats_a_weak_similarity_but_not_a_clear_one():
    weak = decide({"garden": 0.20, "trains": 0.30}, {"garden": ["wall"]}, 0.3)
    assert weak.routed and weak.collections == ["garden"]
    assert weak.reasons[0] == "rule: 'wall' → garden"
    assert weak.reasons[1] == "closest passage: trains 0.30 vs garden 0.20"

    clear = decide({"garden": 0.0, "trains": 0.5}, {"garden": ["train"]}, 0.3)
    assert clear.status == "unsure" and clear.collections == [] and clear.guess == "garden"

    both = decide({"garden": 0.4, "trains": 0.3}, {"garden": ["a"], "trains": ["b"]}, 0.3)
    assert both.status == "unsure" and both.guess == "garden"  # the rules cancel out
    assert 0 < both.confidence < 0.5 <= weak.confidence


# The router on a real corpus -----------------------------------------------------------------------------


def test_similarity_routes_a_clear_question_and_stays_unsure_on_an_ambiguous_one(routed, embedder):
    settings, store = routed
    clear = route(CLEAR, store, embedder, settings)
    assert clear.status == "routed" and clear.collections == ["garden"]
    assert clear.summary() == "Searched garden (the question is closest to it)"
    assert clear.similarity["garden"] - clear.similarity["trains"] >= ROUTE_MARGIN

    unsure = route(AMBIGUOUS, store, embedder, settings)
    assert unsure.status == "unsure" and unsure.collections == []
    assert unsure.summary() == f"Searched everything (closest: {unsure.guess})"


def test_an_unsure_route_never_filters_and_a_confident_one_does(routed, embedder):
    settings, store = routed
    decision, retrieval = route_and_search(AMBIGUOUS, settings, store=store, embedder=embedder)
    assert decision.status == "unsure"
    assert {h.collection for h in retrieval.hits} == {"garden", "trains"}

    decision, retrieval = route_and_search(CLEAR, settings, store=store, embedder=embedder)
    assert decision.routed and {h.collection for h in retrieval.hits} == {"garden"}
    assert retrieval.collections == ["garden"]


def test_a_rule_overrides_a_weak_similarity_and_a_broken_file_never_breaks_a_question(routed, embedder):
    settings, store = routed
    before = route(WEAK, store, embedder, settings)
    assert before.status == "unsure" and before.guess == "trains"

    write_rules(settings.data_dir, '[garden]\nkeywords = ["wall"]\n')
    after = route(WEAK, store, embedder, settings)
    assert after.routed and after.collections == ["garden"]
    assert after.summary() == "Searched garden (the question mentions 'wall')"

    write_rules(settings.data_dir, '[garden]\nkeywords = ["wall"\n')
    decision, retrieval = route_and_search(WEAK, settings, store=store, embedder=embedder)
    assert decision.status == "unsure" and retrieval.hits
    assert decision.notes[0].startswith("routes.toml: not valid TOML")


def test_route_and_search_embed_the_question_once(routed, embedder):
    settings, store = routed
    counting = CountingEmbedder(embedder)
    decision, retrieval = route_and_search(CLEAR, settings, store=store, embedder=counting)
    assert decision.routed and retrieval.hits
    assert counting.queries == 1  # the router's vector is the search's


class SignallingEmbedder(CountingEmbedder):
    """Sets `embedding` when asked for a question's vector (as a first call would load the model)."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.embedding = threading.Event()

    def query(self, texts):
        self.embedding.set()
        return super().query(texts)


def test_the_first_question_loads_the_indexes_beside_the_model_once(routed, embedder, monkeypatch):
    settings, store = routed
    signalling = SignallingEmbedder(embedder)
    events: list[tuple] = []
    real_warm_up = store.warm_up

    def warm_up() -> None:
        # Beside the embedding, not before or after it: this thread sees the question being embedded.
        events.append(
            ("warm", threading.current_thread() is threading.main_thread(), signalling.embedding.wait(10))
        )
        real_warm_up()
        events.append(("warmed",))

    monkeypatch.setattr(store, "warm_up", warm_up)
    _, first = route_and_search(CLEAR, settings, store=store, embedder=signalling)
    assert events == [("warm", False, True), ("warmed",)]  # joined before the search went on
    _, again = route_and_search(WEAK, settings, store=store, embedder=signalling)
    assert len(events) == 2  # once per process and data directory
    assert first.hits and again.hits


def test_a_failing_warm_up_never_breaks_a_question(routed, embedder, monkeypatch):
    settings, store = routed

    def broken() -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(store, "warm_up", broken)
    decision, retrieval = route_and_search(CLEAR, settings, store=store, embedder=embedder)
    assert decision.routed and retrieval.hits


def test_no_routing_when_off_chosen_or_a_single_collection(routed, embedder, tmp_path):
    settings, store = routed
    assert route(CLEAR, store, embedder, settings.replace(routing="off")).status == "off"
    chosen = route(CLEAR, store, embedder, settings, chosen=["trains"])
    assert chosen.status == "chosen" and chosen.collections == ["trains"]
    everything = route(CLEAR, store, embedder, settings, chosen=[])
    assert everything.collections == [] and everything.summary() == "Searched everything (your choice)"
    store.delete_posts(list(POSTS["trains"]))
    assert route(CLEAR, store, embedder, settings).status == "single"


def test_collection_vectors_are_cached_per_table_version(routed, embedder):
    settings, store = routed
    first = collection_vectors(store)
    assert collection_vectors(store) is first and first.chunks == {"garden": 3, "trains": 3}
    # Each collection's similarity is its nearest chunk's cosine; centroids stay unit vectors.
    vector = first.vectors[4]
    assert first.nearest(vector)[first.labels[4]] == pytest.approx(1.0, abs=1e-5)
    assert np.allclose(np.linalg.norm(first.centroids, axis=1), 1.0, atol=1e-5)
    text = "Lentil soup with cumin, simmered for an hour."
    post = Post("soup", "Soup", [Block(text)], raw=text, source="soup.txt", collection="recipes")
    ingest_posts([post], settings, store=store, embedder=embedder)
    again = collection_vectors(store)
    assert again is not first and again.names == ["garden", "recipes", "trains"]


def test_route_round_trips_through_json_and_offers_overrides():
    decision = decide({"garden": 0.6, "trains": 0.1, "books": 0.0}, {}, 0.35)
    copy = Route.from_json(json.loads(json.dumps(decision.to_json())))
    assert copy.summary() == decision.summary() == "Searched garden (the question is closest to it)"
    assert copy.alternatives(["books", "garden", "trains"]) == [
        ("Search all collections", []),
        ("Search only books", ["books"]),
        ("Search only trains", ["trains"]),
    ]


# CLI -----------------------------------------------------------------------------------------------------


def cli(*args: str, data_dir: Path):
    result = CliRunner().invoke(main, [*args, "--data-dir", str(data_dir)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_cli_search_prints_the_route_and_no_route_switches_it_off(data_dir):
    result = cli("search", CLEAR, "--json", data_dir=data_dir)
    assert "route: Searched garden (the question is closest to it)" in result.stderr
    out = json.loads(result.stdout)
    assert out["route"]["status"] == "routed" and {h["collection"] for h in out["hits"]} == {"garden"}

    off = cli("search", CLEAR, "--json", "--no-route", data_dir=data_dir)
    assert "route:" not in off.stderr
    out = json.loads(off.stdout)
    assert out["route"]["status"] == "off" and {h["collection"] for h in out["hits"]} == {"garden", "trains"}

    chosen = cli("search", CLEAR, "--collection", "trains", data_dir=data_dir)
    assert "route:" not in chosen.stderr and "Sleeper" in chosen.stdout


def test_cli_route_command_and_rule_problems(data_dir):
    write_rules(data_dir, '[garden]\nkeywords = ["wall"]\n[books]\nkeywords = ["novel"]\n')
    result = cli("route", WEAK, data_dir=data_dir)
    lines = result.stdout.splitlines()
    assert lines[0] == "Searched garden (the question mentions 'wall')"
    assert "  rule: 'wall' → garden" in lines
    assert any(line.startswith("  garden") and "rule: wall" in line for line in lines)
    assert "routes.toml: [books]: no such collection (collections: garden, trains)" in result.stderr
    decision = json.loads(cli("route", WEAK, "--json", data_dir=data_dir).stdout)
    assert decision["status"] == "routed" and decision["rule_hits"] == {"garden": ["wall"]}


# App -----------------------------------------------------------------------------------------------------


@pytest.fixture
def app_env(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_app(monkeypatch, data_dir)


def captions(element) -> list[str]:
    return [str(c.value).replace("\\", "") for c in element.caption]


def click(at: AppTest, label: str) -> AppTest:
    next(b for b in at.button if str(b.label).replace("\\", "") == label).click()
    return at.run()


def test_chat_shows_the_route_and_the_override_asks_again(app_env, monkeypatch):
    from tests.servers import ScriptedOpenAIServer

    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("INKWELL_MAX_RETRIES", "0")
        server.chat("In February.").chat("In February, while they sleep.").chat("No trains there.")
        at = open_app()
        at.sidebar.toggle(key="show_details").set_value(True).run()  # routing is the owner's detail
        at.chat_input[0].set_value(CLEAR).run()
        assert not at.exception and not at.error
        reply = at.chat_message[1]
        assert "Searched garden (the question is closest to it)" in captions(reply)
        context = server.chat_requests[0].body["messages"][-1]["content"]
        assert "crossing branches" in context and "Vienna" not in context  # only garden was searched

        at = click(at, "Search all collections")
        assert not at.exception and not at.error
        assert len(at.chat_message) == 2  # the new answer replaced the routed one
        reply = at.chat_message[1]
        assert reply.markdown[0].value == "In February, while they sleep."
        assert "Searched everything (your choice)" in captions(reply)
        assert "Vienna" in server.chat_requests[1].body["messages"][-1]["content"]

        # The trains posts do not answer a pruning question: the honest reply, with no model call.
        at = click(at, "Search only trains")
        assert "Searched trains (your choice)" in captions(at.chat_message[1])
        assert "I haven't written about that" in at.chat_message[1].markdown[0].value.replace("\\", "")
        assert len(server.chat_requests) == 2
        assert len(at.chat_message) == 2 and at.chat_message[0].text[0].value == CLEAR
    # Asked once, re-asked twice by the buttons: logged once, as its last answer (declined, in trains).
    from core.store import Store
    from core.store.questions import QuestionLog

    (logged,) = QuestionLog(Store(app_env)).query()
    assert logged.question == CLEAR and logged.declined and logged.mode == "none"


def test_ingest_page_saves_valid_rules_only_and_tries_a_question(app_env):
    at = open_app("pages/posts.py")
    area = at.text_area(key="routes_text")
    assert "# [garden]" in area.value and "# [trains]" in area.value  # the template
    area.set_value('[gardn]\nkeywords = ["wall"]\n')
    at = click(at, "Save rules")
    errors = [str(e.value) for e in at.expander("routing_section").error]  # in the section, kept open
    assert any("Not saved" in e and "no such collection" in e for e in errors), errors
    assert not rules_path(app_env).exists()

    at.text_area(key="routes_text").set_value('[garden]\nkeywords = ["wall"]\n')
    at = click(at, "Save rules")
    assert not at.error and rules_path(app_env).read_text() == '[garden]\nkeywords = ["wall"]\n'

    at.text_input(key="routes_question").set_value(WEAK).run()
    assert not at.exception and not at.error
    assert "Searched garden (the question mentions 'wall')" in captions(at)
    table = at.dataframe[-1].value
    assert list(table["collection"]) == ["garden", "trains"]


def test_rules_being_typed_survive_a_visit_to_another_page(app_env):
    """The owner types routing rules, opens the chat to check a collection's name, comes back: the rules
    are still there (they were back to the file's text, or the template)."""
    at = open_app("pages/posts.py")
    typed = '[garden]\nkeywords = ["wall", "hedge"]\n'
    at.text_area(key="routes_text").input(typed).run()
    at.switch_page("pages/chat.py").run()
    at.switch_page("pages/posts.py").run()
    assert not at.exception
    assert at.text_area(key="routes_text").value == typed
    at = click(at, "Save rules")
    assert not at.error and rules_path(app_env).read_text() == typed
    at.switch_page("pages/chat.py").run()
    at.switch_page("pages/posts.py").run()
    assert at.text_area(key="routes_text").value == typed  # saved: the file's text, no draft


def no_vector_reads(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_vectors(*_args, **_kwargs):
        raise AssertionError("routing read every chunk vector")

    monkeypatch.setattr(store, "chunk_vectors", no_vectors)


def test_one_collection_is_not_routed_and_reads_no_vectors(routed, embedder, monkeypatch):
    settings, store = routed
    store.delete_posts(list(POSTS["trains"]))
    no_vector_reads(store, monkeypatch)
    assert route(CLEAR, store, embedder, settings).status == "single"


def test_routing_between_collections_reads_no_chunk_vectors(routed, embedder, monkeypatch):
    """Per-collection nearest chunks through the store's vector search: the same similarities as over
    every vector (issue 13: reading them all took 10 s and most of 7 GB at a million chunks)."""
    settings, store = routed
    over_all = collection_vectors(store)
    vector = embed_query(embedder, CLEAR)
    expected = dict(zip(over_all.names, over_all.nearest(vector).tolist(), strict=True))
    no_vector_reads(store, monkeypatch)
    decision = route(CLEAR, store, embedder, settings, vector=vector)
    assert decision.status == "routed" and decision.collections == ["garden"]
    assert store.nearest_by_collection(vector, over_all.names) == pytest.approx(expected, abs=1e-5)
