"""core.embed.memo: passage vectors computed once per process and text, the same as embedding them."""

from __future__ import annotations

import numpy as np

from core.embed import VectorMemo


class Counting:
    """A real embedder that counts the texts it embeds."""

    def __init__(self, inner) -> None:
        self.inner, self.model_id, self.dim, self.texts = inner, inner.model_id, inner.dim, 0

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)


def test_memo_gives_the_embedders_vectors_and_embeds_each_text_once(embedder):
    counting, memo = Counting(embedder), VectorMemo(max_items=3)
    texts = ["Swarming starts in May.", "The loaf proves overnight.", "Swarming starts in May."]
    first = memo.embed(counting, texts)
    assert counting.texts == 2  # the repeated sentence once
    np.testing.assert_allclose(first, embedder.embed(texts), atol=1e-5)
    again = memo.embed(counting, texts[:2])
    assert counting.texts == 2 and memo.hits >= 2
    np.testing.assert_allclose(again, first[:2])
    memo.embed(counting, ["a", "b", "c"])  # the bound: the oldest entries go
    memo.embed(counting, ["Swarming starts in May."])
    assert counting.texts == 6


def test_warm_up_leaves_an_answer_only_its_question_to_embed(embedder):
    from core.answer.extractive import extract_answer, warm_up
    from core.embed import passage_vectors
    from core.models import Hit

    rows = [
        {"title": "On Bees", "section": "Swarms", "text": "Swarming season starts in May. A colony that runs "
         "out of space raises a new queen and half of it leaves."},
        {"title": "Sourdough", "section": "", "text": "My sourdough starter is fed rye flour twice a day. "
         "The loaf proves overnight in the fridge."},
    ]  # fmt: skip
    hits = [
        Hit(f"p{i}", r["title"], "writings", f"p{i}#0000", r["section"], r["text"], [], 1.0 - i / 10, i + 1)
        for i, r in enumerate(rows)
    ]
    passage_vectors.clear()
    # Asked to stop (the process is exiting) before its first batch: nothing is embedded.
    assert warm_up(rows, embedder, stop=lambda: True) == 0 and passage_vectors.misses == 0
    assert warm_up(rows, embedder) == 6  # two headings, four sentences
    before = passage_vectors.misses
    answer = extract_answer("When does swarming start?", hits, embedder)
    assert answer.sentences and passage_vectors.misses == before  # every passage vector was ready


class CountingQueries(Counting):
    """Counts the questions embedded in the query form (e5's "query: " prefix; MiniLM has none)."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.questions = 0

    def query(self, texts):
        self.questions += len(texts)
        return [[-x for x in v] for v in self.inner.embed(texts)]  # a form unlike `embed`'s, to tell apart


def test_a_question_is_embedded_once_in_its_query_form(embedder):
    from core.embed.memo import VectorMemo, embed_query, query_vectors

    counting = CountingQueries(embedder)
    question = "When do the bees swarm? (test_vector_memo)"
    first = embed_query(counting, question)
    np.testing.assert_allclose(first, -np.asarray(embedder.embed([question])[0]), atol=1e-5)
    first[:] = 0  # a caller's copy: changing it changes nothing the memo holds
    again = embed_query(counting, question)
    assert counting.questions == 1 and counting.texts == 0
    np.testing.assert_allclose(again, -np.asarray(embedder.embed([question])[0]), atol=1e-5)
    assert query_vectors.queries and not VectorMemo().queries
