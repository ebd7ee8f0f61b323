"""The LLM cache file, language detection, and translating questions into the writings' language."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.answer import translate_for_corpus, translate_to_language
from core.config import Settings
from core.llm import LLMCache, corpus_language
from core.llm.cache import FILENAME, cache_key
from core.store import Store
from core.text import detect_language
from tests.conftest import DEMO


def test_replies_are_kept_by_key_in_a_file_beside_the_tables(tmp_path: Path):
    key = cache_key("gpt-4o-mini via OpenAI", "keywords", "prep-1", "system", "user", {"type": "object"})
    assert key == cache_key(
        "gpt-4o-mini via OpenAI", "keywords", "prep-1", "system", "user", {"type": "object"}
    )
    assert key != cache_key("gpt-4.1 via OpenAI", "keywords", "prep-1", "system", "user", {"type": "object"})
    assert key != cache_key(
        "gpt-4o-mini via OpenAI", "keywords", "prep-1", "system", "user 2", {"type": "object"}
    )
    with LLMCache(tmp_path) as cache:
        assert cache.get(key) is None
        cache.put(
            key, model="m", task="keywords", reply='{"chunks": []}', prompt_tokens=12, completion_tokens=3
        )
        hit = cache.get(key)
    assert (hit.reply, hit.prompt_tokens, hit.completion_tokens) == ('{"chunks": []}', 12, 3)
    assert (tmp_path / FILENAME).is_file()
    with LLMCache(tmp_path) as reopened:  # it persists
        assert reopened.get(key) == hit


def test_the_cache_file_does_not_disturb_the_tables(tmp_path: Path):
    LLMCache(tmp_path).close()
    store = Store(tmp_path)
    assert store.counts() == (0, 0)
    assert sorted(store.db.table_names()) in ([], ["posts"])


def test_many_threads_share_one_cache(tmp_path: Path):
    errors: list[BaseException] = []
    with LLMCache(tmp_path) as cache:

        def work(n: int) -> None:
            try:
                for i in range(25):
                    cache.put(f"k{n}-{i}", model="m", task="t", reply=str(i))
                    assert cache.get(f"k{n}-{i}").reply == str(i)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert cache.count() == 200


def test_corpus_language_is_the_language_with_most_text(tmp_path: Path):
    assert corpus_language(tmp_path) is None
    assert not (tmp_path / FILENAME).exists()  # reading does not create the file
    with LLMCache(tmp_path) as cache:
        assert cache.record_languages([("a", "fr", 5000), ("b", "en", 1200), ("c", "und", 9000)]) == "fr"
        assert corpus_language(tmp_path) == "fr"
        # Posts no longer stored are forgotten.
        assert cache.record_languages([("b", "en", 1200)], present={"b", "c"}) == "en"
        assert cache.post_language("a") is None
    assert corpus_language(tmp_path) == "en"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("How do you pick wood at the sawmill?", "en"),
        ("Why did you start the blog?", "en"),
        ("Comment choisis-tu le bois à la scierie ?", "fr"),
        ("Wie wählst du das Holz im Sägewerk aus?", "de"),
        ("¿Cómo eliges la madera en el aserradero?", "es"),
        ("Come scegli il legno in segheria?", "it"),
        ("Por que você começou o blog?", "pt"),
        ("Hoe kies je hout bij de zagerij?", "nl"),
        ("Yazar sosyal medya hakkında ne düşünüyor?", "tr"),
        ("Her gün aynı yoldan yürüyorum, çünkü bu bana iyi geliyor.", "tr"),
        ("She walks her dog every day and her neighbours wave at her.", "en"),
        ("製材所でどうやって木を選びますか？", "ja"),
        ("Как вы выбираете древесину?", "ru"),
        ("", "und"),
        ("12345 !!!", "und"),
    ],
)
def test_detect_language(text: str, lang: str):
    assert detect_language(text) == lang


def test_detect_language_on_the_demo_posts():
    demo = DEMO / "posts"
    assert {detect_language(p.read_text(encoding="utf-8")) for p in demo.rglob("*.md")} == {"en"}


def test_questions_are_translated_into_the_corpus_language(scripted, tmp_path: Path):
    settings = Settings(data_dir=tmp_path, openai_base_url=scripted.base_url, max_retries=0)
    with LLMCache(tmp_path) as cache:
        cache.record_languages([("essai", "fr", 4000)])
    # Already in French: no call.
    assert translate_for_corpus("Comment choisis-tu le bois ?", settings) == "Comment choisis-tu le bois ?"
    assert scripted.requests == []
    scripted.chat("Comment choisis-tu le bois à la scierie ?")
    assert translate_for_corpus("How do you pick wood at the sawmill?", settings) == (
        "Comment choisis-tu le bois à la scierie ?"
    )
    [request] = scripted.chat_requests
    assert "into French" in request.body["messages"][0]["content"]
    assert request.body["messages"][1]["content"] == "How do you pick wood at the sawmill?"


def test_without_a_recorded_language_questions_go_to_english(scripted, tmp_path: Path):
    settings = Settings(data_dir=tmp_path, openai_base_url=scripted.base_url, max_retries=0)
    assert translate_for_corpus("What about oak?", settings) == "What about oak?"  # English: no call
    scripted.chat("What do you think of oak?")
    assert translate_to_language("Que penses-tu du chêne ?", settings, "en") == "What do you think of oak?"
    assert "English" in scripted.chat_requests[0].body["messages"][0]["content"]
    assert translate_to_language("Q?", settings, "xx") == "Q?"  # unknown target: unchanged, no call
    assert len(scripted.requests) == 1


def test_ingest_records_the_corpus_language(tmp_path: Path, embedder):
    from core.ingest import ingest_posts
    from core.parse import parse_text

    settings = Settings(data_dir=tmp_path / "db")
    french = parse_text(
        "Je travaille le chêne depuis dix ans. Le bois vient de la scierie du village, et je le laisse "
        "sécher deux ans avant de le couper.",
        "Le chêne",
    )
    ingest_posts([french], settings, embedder=embedder)
    assert corpus_language(settings.data_dir) == "fr"
