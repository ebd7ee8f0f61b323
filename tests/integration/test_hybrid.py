"""Keyword (BM25) and hybrid retrieval over a real LanceDB table with the real bundled embedder."""

from __future__ import annotations

import pytest

from core.config import Settings
from core.ingest import edit_chunk, ingest_posts
from core.models import Block, Post
from core.search import search
from core.search.retrieve import rrf_best, rrf_scores, score_fusion
from core.store import KeywordSearchError, Store
from core.store.schema import SEARCH_TEXT

POSTS = {
    # The rare proper noun: mentioned once, in passing, in a chunk about something else.
    "garden": (
        "Garden",
        "writings",
        "Tomatoes grow against the south wall, the compost takes kitchen scraps, and the beans climb the "
        "fence. My neighbour Thaddeus Vorhangel lent me his spade for the spring digging.",
    ),
    "vorhees": (
        "Neighbours",
        "writings",
        "Our neighbours, the Vorhees family, lent us a ladder and a hedge trimmer.",
    ),
    "angel": ("Angels", "writings", "Thaddeus Angelo, my uncle, was a carpenter who built the garden shed."),
    "bees": ("On Bees", "writings", "Our beehives swarmed in May; the queen left with half of the colony."),
    "bread": (
        "Sourdough",
        "recipes",
        "My sourdough starter is fed rye flour twice a day; the loaf proves overnight.",
    ),
    "rye": (
        "Rye",
        "recipes",
        "Rye, rye and more rye: rye bread, rye crackers, rye porridge. Rye everywhere.",
    ),
    "chess": (
        "Chess",
        "games",
        "The Sicilian Defence is my favourite chess opening; rye whisky after a win.",
    ),
}


def post(pid: str, title: str, collection: str, text: str) -> Post:
    return Post(pid, title, [Block(text)], raw=text, source=f"{pid}.txt", collection=collection)


def ingest_all(settings: Settings, store: Store, embedder) -> Store:
    posts = [post(pid, *values) for pid, values in POSTS.items()]
    ingest_posts(posts, settings, store=store, embedder=embedder)
    return store


@pytest.fixture(scope="module")
def table(tmp_path_factory, embedder) -> Store:
    """Shared by the tests that only read; the ones that write get `fresh`."""
    settings = Settings.load({"data_dir": tmp_path_factory.mktemp("hybrid") / "db"}, environ={})
    return ingest_all(settings, Store(settings.data_dir), embedder)


@pytest.fixture
def fresh(settings, store, embedder) -> Store:
    return ingest_all(settings, store, embedder)


def ids(result) -> list[str]:
    return [h.post_id for h in result.candidates]


# Fusion math ---------------------------------------------------------------------------------------


def test_rrf_matches_hand_computed_values():
    fused = rrf_scores([["a", "b", "c"], ["c", "a"]], k=60)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert sorted(fused, key=lambda key: -fused[key]) == ["a", "c", "b"]
    # A small k weighs the top of each list more heavily.
    small = rrf_scores([["a", "b", "c"], ["c", "a"]], k=1)
    assert (small["a"], small["b"], small["c"]) == pytest.approx((1 / 2 + 1 / 3, 1 / 3, 1 / 4 + 1 / 2))
    assert rrf_best(2, 60) == pytest.approx(2 / 61)
    assert rrf_best(1, 1) == pytest.approx(1 / 2)


def test_score_fusion_matches_hand_computed_values():
    fused = score_fusion({"a": 0.8, "b": 0.4, "c": 0.2}, {"c": 6.0, "a": 3.0})
    assert fused == pytest.approx({"a": 0.5 + 0.25, "b": 0.25, "c": 0.125 + 0.5})
    assert score_fusion({"a": 0.8}, {"a": 3.0}, dense_weight=0.7) == pytest.approx({"a": 1.0})
    # No keyword match at all: the dense half alone, so nothing tops 0.5.
    assert score_fusion({"a": 0.6, "b": 0.3}, {}) == pytest.approx({"a": 0.5, "b": 0.25})
    assert score_fusion({"a": -0.1, "b": 0.0}, {}) == {"a": 0.0, "b": 0.0}


def test_hybrid_relevance_is_the_fused_score(table, settings, embedder):
    result = search("Thaddeus lent a spade", settings, store=table, embedder=embedder, mode="hybrid")
    best_dense = max(h.dense_relevance for h in result.candidates)
    best_keyword = max(h.keyword_score or 0 for h in result.candidates)
    assert sum(h.keyword_rank is not None for h in result.candidates) >= 2
    for hit in result.candidates:
        expected = 0.5 * hit.dense_relevance / best_dense + 0.5 * (hit.keyword_score or 0) / best_keyword
        assert hit.relevance == pytest.approx(expected) == pytest.approx(hit.fused_score)

    rrf = search(
        "Thaddeus lent a spade", settings.replace(fusion="rrf"), store=table, embedder=embedder, mode="hybrid"
    )
    for hit in rrf.candidates:
        expected = (1 / (60 + hit.dense_rank) if hit.dense_rank else 0) + (
            1 / (60 + hit.keyword_rank) if hit.keyword_rank else 0
        )
        assert hit.fused_score == pytest.approx(expected)
        assert hit.relevance == pytest.approx(expected / (2 / 61))


# Keyword search finds what dense search ranks poorly -----------------------------------------------


def test_rare_proper_noun_is_found_by_keywords(table, settings, embedder):
    dense = search("Vorhangel", settings, store=table, embedder=embedder, mode="dense")
    assert ids(dense)[0] != "garden"  # the premise: embeddings don't rank the rare name first
    fts = search("Vorhangel", settings, store=table, embedder=embedder, mode="fts")
    assert ids(fts) == ["garden"]
    assert fts.candidates[0].relevance == 1.0 and fts.candidates[0].keyword_rank == 1
    hybrid = search("Vorhangel", settings, store=table, embedder=embedder, mode="hybrid")
    top = hybrid.candidates[0]
    assert top.post_id == "garden"
    assert top.keyword_rank == 1 and top.dense_rank == ids(dense).index("garden") + 1
    # Dense-only candidates carry their dense contribution and no keyword one.
    assert all(h.keyword_rank is None and h.dense_rank is not None for h in hybrid.candidates[1:])


def test_keyword_only_candidates_get_their_cosine_relevance(table, settings, embedder):
    narrow = settings.replace(top_k=1, min_chunks=0)
    result = search("Vorhangel", narrow, store=table, embedder=embedder, mode="hybrid")
    keyword_only = next(h for h in result.candidates if h.dense_rank is None)
    assert keyword_only.post_id == "garden" and keyword_only.keyword_rank == 1
    dense = search("Vorhangel", settings, store=table, embedder=embedder, mode="dense")
    garden = next(h for h in dense.candidates if h.post_id == "garden")
    assert keyword_only.dense_relevance == pytest.approx(garden.relevance, abs=1e-5)


def test_collection_prefilter_applies_to_keyword_search(table, settings, embedder):
    one = settings.replace(top_k=1, min_chunks=0)
    # "rye" scores highest in the recipes posts; with a post-filter on the top 1, games would be empty.
    assert ids(search("rye", one, store=table, embedder=embedder, mode="fts"))[0] in ("rye", "bread")
    games = search("rye", one, store=table, embedder=embedder, mode="fts", collections=["games"])
    assert ids(games) == ["chess"]
    hybrid = search(
        "Vorhangel", settings, store=table, embedder=embedder, mode="hybrid", collections=["recipes"]
    )
    assert set(ids(hybrid)) == {"bread", "rye"} and all(h.keyword_rank is None for h in hybrid.candidates)


# Thresholds ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "fusion"), [("fts", "score"), ("hybrid", "score"), ("hybrid", "rrf")])
def test_relevance_stays_within_0_1_and_threshold_rules_apply(table, settings, embedder, mode, fusion):
    settings = settings.replace(fusion=fusion)
    rules = settings.replace(threshold=0.6, min_chunks=0, max_chunks=40)
    result = search("rye bread with Thaddeus", rules, store=table, embedder=embedder, mode=mode)
    rel = [h.relevance for h in result.candidates]
    assert all(0.0 <= r <= 1.0 for r in rel) and rel == sorted(rel, reverse=True)
    assert [h.rank for h in result.candidates] == list(range(1, len(rel) + 1))
    assert [h.passed for h in result.candidates] == [r >= 0.6 for r in rel]
    assert 0 < len(result.hits) < len(result.candidates)
    at_least = settings.replace(threshold=0.99, min_chunks=3, max_chunks=40)
    assert len(search("rye", at_least, store=table, embedder=embedder, mode=mode).hits) == 3
    at_most = settings.replace(threshold=0.0, min_chunks=0, max_chunks=2)
    assert len(search("rye", at_most, store=table, embedder=embedder, mode=mode).hits) == 2


# The index stays current ---------------------------------------------------------------------------


def test_new_chunks_are_findable_right_after_ingest_and_gone_after_delete(fresh, settings, embedder):
    table = fresh
    chunks = table.chunks
    assert table.has_fts_index(chunks)
    assert chunks.index_stats(f"{SEARCH_TEXT}_idx").num_unindexed_rows == 0
    assert search("Quillfeather", settings, store=table, embedder=embedder, mode="fts").candidates == []

    ingest_posts(
        [post("owl", "Owls", "writings", "A barn owl we named Quillfeather nests in the hayloft.")],
        settings,
        store=table,
        embedder=embedder,
    )
    assert table.chunks.index_stats(f"{SEARCH_TEXT}_idx").num_unindexed_rows == 0  # folded in by optimize
    for mode in ("fts", "hybrid"):
        assert ids(search("Quillfeather", settings, store=table, embedder=embedder, mode=mode))[0] == "owl"

    # An edited chunk is found by its new words, not its old ones (no optimize in between).
    chunk_id = table.list_chunks("owl")[0]["chunk_id"]
    edit_chunk(
        chunk_id,
        settings,
        text="A tawny owl called Nightjarro roosts in the oak.",
        keywords=["owl"],
        store=table,
        embedder=embedder,
    )
    assert ids(search("Nightjarro", settings, store=table, embedder=embedder, mode="fts")) == ["owl"]
    assert search("Quillfeather", settings, store=table, embedder=embedder, mode="fts").candidates == []

    table.delete_posts(["owl"])  # the app deletes without optimizing: deleted rows must still vanish
    assert search("Nightjarro", settings, store=table, embedder=embedder, mode="fts").candidates == []
    table.optimize()
    assert search("Nightjarro", settings, store=table, embedder=embedder, mode="fts").candidates == []
    assert "owl" not in ids(search("Nightjarro", settings, store=table, embedder=embedder, mode="hybrid"))


def test_a_table_from_before_keyword_search_is_upgraded(fresh, settings, embedder):
    table = fresh
    chunks = table.chunks
    chunks.drop_index(f"{SEARCH_TEXT}_idx")
    chunks.drop_columns([SEARCH_TEXT])
    assert SEARCH_TEXT not in table.chunks.schema.names
    assert ids(search("Vorhangel", settings, store=table, embedder=embedder, mode="fts")) == ["garden"]
    assert table.has_fts_index(table.chunks)
    assert table.model_id() == embedder.model_id  # the schema metadata survived the new column
    assert SEARCH_TEXT not in table.list_chunks()[0] and SEARCH_TEXT not in table.get_chunk("garden#0000")


# Queries LanceDB could choke on ---------------------------------------------------------------------


def test_stop_words_and_punctuation_do_not_break_keyword_search(table, settings, embedder):
    for question in ["?", "the", "the and of", '"', "AND OR NOT", "title:(bees", "*", "-", "ü", "a" * 300]:
        fts = search(question, settings, store=table, embedder=embedder, mode="fts")
        assert fts.mode == "fts" and not fts.notes, question
        assert all(0.0 <= h.relevance <= 1.0 for h in fts.candidates)
        hybrid = search(question, settings, store=table, embedder=embedder, mode="hybrid")
        assert len(hybrid.candidates) == len(POSTS), question  # the dense half still answers
        assert 0.0 <= hybrid.candidates[-1].relevance <= hybrid.candidates[0].relevance <= 1.0


def test_a_failing_keyword_search_falls_back_to_dense(fresh, settings, embedder, monkeypatch):
    table = fresh

    def broken(*args, **kwargs):
        raise KeywordSearchError("keyword search failed: syntax error")

    monkeypatch.setattr(table, "keyword_search", broken)
    for mode in ("fts", "hybrid"):
        result = search("When do bees swarm?", settings, store=table, embedder=embedder, mode=mode)
        assert result.mode == "dense" and result.notes and "syntax error" in result.notes[0]
        assert ids(result)[0] == "bees"


def test_unknown_mode_is_refused(table, settings, embedder):
    with pytest.raises(ValueError, match="retrieval mode"):
        search("bees", settings, store=table, embedder=embedder, mode="bm42")


def test_a_reembed_keeps_keyword_search_indexed(fresh, settings, embedder):
    from core.ingest import reembed

    reembed(settings, store=fresh, embedder=embedder)  # overwrites the table in one commit
    assert fresh.has_fts_index(fresh.chunks)
    assert ids(search("Vorhangel", settings, store=fresh, embedder=embedder, mode="fts")) == ["garden"]
