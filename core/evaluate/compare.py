"""Retrieval configurations side by side: the Evaluate page's and `inkwell eval`'s engine.

Unlike core/evaluate/metrics.py's metric code, this runs real retrieval: each configuration is a set of settings
overrides (mode, fusion, reranker, chunking). Retrieval-only overrides search the user's table as it is
(read-only); a configuration that chunks differently, or a run on given posts, searches a scratch table of
its own under `<data_dir>/eval-tables/`, kept between runs and filled through the content-hash vector
cache, so a second run re-embeds only what changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.evaluate.metrics import (
    FIXED_DEPTH,
    EvalReport,
    Query,
    QueryResult,
    run_eval,
)

if TYPE_CHECKING:
    import numpy as np

    from core.config import Settings
    from core.embed import Embedder
    from core.models import Post
    from core.store import Store


# --- configurations -------------------------------------------------------------------------------------

# Settings that decide how posts are cut: a configuration that changes any of them needs its own table.
CHUNKING_FIELDS = ("chunk_strategy", "chunk_tokens", "fixed_chars", "fixed_overlap")
# What a configuration may override.
CONFIG_FIELDS = (
    "retrieval_mode",
    "fusion",
    "rrf_k",
    "reranker",
    "rerank_top_n",
    "rerank_model",
    *CHUNKING_FIELDS,
)
SCRATCH_DIR = "eval-tables"
# Chunk sizes (tokens) the Evaluate page offers besides the configured one.
CHUNK_SIZES = (100, 150, 200, 300, 400, 600)

Progress = Callable[[int, int, str], None]


@dataclass
class EvalConfig:
    """A named configuration: Settings overrides, keys from CONFIG_FIELDS."""

    name: str
    overrides: dict[str, Any] = field(default_factory=dict)

    def apply(self, settings: Settings) -> Settings:
        unknown = sorted(set(self.overrides) - set(CONFIG_FIELDS))
        if unknown:
            raise ValueError(f"configuration {self.name!r}: cannot override {', '.join(unknown)}")
        return settings.replace(**self.overrides)


@dataclass
class ConfigResult:
    config: EvalConfig
    report: EvalReport
    chunks: int  # chunks in the table this configuration searched
    table: str  # "stored" (the user's table) or the scratch table's folder
    notes: list[str] = field(default_factory=list)  # e.g. keyword search fell back to dense


@dataclass
class Comparison:
    k: int
    queries: list[Query]
    qrels: dict[str, dict[str, int]]
    results: list[ConfigResult]
    baseline: str | None = None  # the name of the row the others are compared with
    chunks_embedded: int = 0  # for scratch tables in this run; the rest came from the vector cache
    chunks_reused: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def reports(self) -> list[EvalReport]:
        return [r.report for r in self.results]


def config_grid(
    settings: Settings,
    modes: Sequence[str] = (),
    fusions: Sequence[str] = (),
    rerankers: Sequence[str] = (),
    chunk_tokens: Sequence[int] = (),
    *,
    with_baseline: bool = False,
) -> list[EvalConfig]:
    """Every combination of the chosen values (an empty choice: the setting's own value).

    Fusion only varies for hybrid. A name lists a dimension only when the grid varies it or it differs
    from the settings, so `modes=["dense", "hybrid"]` gives rows "dense" and "hybrid"; otherwise names
    read like "hybrid rrf+llm 150tok" (`inkwell eval` names reranked rows mode+reranker too).
    `with_baseline` puts dense retrieval with the configured chunking first when the grid lacks it.
    """
    modes, fusions = _unique(modes) or [settings.retrieval_mode], _unique(fusions) or [settings.fusion]
    rerankers, sizes = (
        _unique(rerankers) or [settings.reranker],
        _unique(chunk_tokens) or [settings.chunk_tokens],
    )
    show_fusion = len(fusions) > 1 or fusions != [settings.fusion]
    show_size = len(sizes) > 1 or sizes != [settings.chunk_tokens]
    configs: list[EvalConfig] = []
    for size in sizes:
        for reranker in rerankers:
            for mode in modes:
                for fusion in fusions if mode == "hybrid" else [settings.fusion]:
                    name = mode + (f" {fusion}" if mode == "hybrid" and show_fusion else "")
                    name += f"+{reranker}" if reranker != "none" else ""
                    name += f" {size}tok" if show_size else ""
                    overrides = {"retrieval_mode": mode, "fusion": fusion, "reranker": reranker}
                    configs.append(EvalConfig(name, {**overrides, "chunk_tokens": int(size)}))
    if with_baseline and baseline_name(configs, settings) is None:
        name = "dense" + (f" {settings.chunk_tokens}tok" if show_size else "")
        overrides = {"retrieval_mode": "dense", "reranker": "none", "chunk_tokens": settings.chunk_tokens}
        configs.insert(0, EvalConfig(name, overrides))
    return configs


def _unique(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def baseline_name(configs: Sequence[EvalConfig], settings: Settings) -> str | None:
    """The first dense-only configuration (no reranker) with the configured chunking: the seed's setup."""
    for config in configs:
        applied = config.apply(settings)
        if (
            applied.retrieval_mode == "dense"
            and applied.reranker == "none"
            and _chunking(applied) == _chunking(settings)
        ):
            return config.name
    return None


def _chunking(settings: Settings) -> tuple:
    return tuple(getattr(settings, name) for name in CHUNKING_FIELDS)


def ranking_settings(settings: Settings, k: int) -> Settings:
    """Rank metrics need a full ranking, not the answer-context rules: the top max(k, 10), all kept."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    depth = max(k, FIXED_DEPTH)
    return settings.replace(
        threshold=0.0, min_chunks=0, max_chunks=max(settings.top_k, depth), top_k=max(settings.top_k, depth)
    )


class CachingEmbedder:
    """An embedder that first looks vectors up by content hash in other tables (the ingest cache, across
    tables): a scratch table re-embeds only chunks no table holds yet."""

    def __init__(self, inner: Embedder, sources: Sequence[Store]):
        self.inner = inner
        self.sources = list(sources)
        self.model_id = inner.model_id
        self.embedded = 0
        self.reused = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.query(texts)  # questions are never cached

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        from core.embed import content_hash

        hashes = [content_hash(self.model_id, text) for text in texts]
        found: dict[str, np.ndarray] = {}
        for store in self.sources:
            missing = [h for h in hashes if h not in found]
            if not missing:
                break
            found.update(store.cached_vectors(missing))
        todo = dict(zip(hashes, texts, strict=True))
        todo = {h: t for h, t in todo.items() if h not in found}
        if todo:
            found.update(zip(todo, self.inner.embed(list(todo.values())), strict=True))
        self.embedded += len(todo)
        self.reused += len(texts) - len(todo)
        if not hashes:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([np.asarray(found[h], dtype=np.float32) for h in hashes])


def compare(
    queries: Sequence[Query],
    qrels: Mapping[str, Mapping[str, int]],
    configs: Sequence[EvalConfig],
    settings: Settings,
    *,
    k: int = 10,
    posts: Sequence[Post] | None = None,
    embedder: Embedder | None = None,
    work_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> Comparison:
    """Evaluate each configuration on the same queries; one EvalReport per configuration, in order.

    Without `posts`, configurations search the table at settings.data_dir (never written to); those
    that chunk differently get a scratch table of the stored posts re-chunked. With `posts` (e.g. the
    demo blog), every configuration searches a scratch table of those posts. Scratch tables live under
    `work_dir` (default `<data_dir>/eval-tables`) and are synced (stale posts dropped, changed ones
    re-ingested) on every run. `progress(done, total, message)` follows tables and queries.
    """
    from core.embed import embedder_for_store
    from core.store import Store

    if not configs:
        raise ValueError("choose at least one configuration")
    if not queries:
        raise ValueError("the query set is empty")
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise ValueError(f"configuration names must differ: {', '.join(names)}")
    applied = [c.apply(settings) for c in configs]
    stored = Store(settings.data_dir)
    embedder = embedder or embedder_for_store(settings, stored.model_id())
    stored.check_model(embedder.model_id)
    work = Path(work_dir) if work_dir is not None else settings.data_dir / SCRATCH_DIR
    comparison = Comparison(k, list(queries), {q: dict(d) for q, d in qrels.items()}, [])
    comparison.baseline = baseline_name(configs, settings)

    # A table per distinct chunking (or the stored table), built before any clock starts.
    keys = [_table_key(s, settings, posts) for s in applied]
    tables = list(dict.fromkeys(keys))
    scratch = [key for key in tables if key is not None]
    if None in keys and stored.chunks is None:
        raise ValueError("nothing is stored yet: ingest posts first")
    total = len(scratch) + len(configs) * len(queries)
    step = _Steps(total, progress)
    stores: dict[tuple | None, Store] = {None: stored}
    if scratch:
        corpus = list(posts) if posts is not None else _stored_posts(stored, comparison.notes)
        caching = CachingEmbedder(embedder, [stored])
        for key, config_settings in _first_per_key(keys, applied):
            step.message(f"Building the table for chunking {_describe(config_settings)}…")
            stores[key] = _scratch_table(corpus, config_settings, work, caching)
            caching.sources.append(stores[key])
            step.tick(f"Table for chunking {_describe(config_settings)} ready")
        comparison.chunks_embedded, comparison.chunks_reused = caching.embedded, caching.reused

    if any(s.retrieval_mode != "fts" for s in applied):
        embedder.embed(["warm-up"])  # load the model before the clock starts: latency is per query
    for reranker_settings in {s.reranker: s for s in applied if s.reranker != "none"}.values():
        from core.search import prepare_reranker

        prepare_reranker(reranker_settings)  # one that cannot load fails here, not silently per query
    for config, config_settings, key in zip(configs, applied, keys, strict=True):
        comparison.results.append(
            _run_config(queries, qrels, config, config_settings, k, stores[key], embedder, step)
        )
    return comparison


def posts_table(
    posts: Sequence[Post],
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    work_dir: Path | None = None,
    reuse: Sequence[Store] = (),
) -> Store:
    """A scratch table of `posts` chunked as `settings` says, under `<data_dir>/eval-tables` (or `work_dir`),
    synced with them; vectors are reused by content hash from the stored table and `reuse`'s."""
    from core.embed import embedder_for_store
    from core.store import Store

    stored = Store(settings.data_dir)
    embedder = embedder or embedder_for_store(settings, stored.model_id())
    work = work_dir if work_dir is not None else settings.data_dir / SCRATCH_DIR
    return _scratch_table(posts, settings, work, CachingEmbedder(embedder, [stored, *reuse]))


class _Steps:
    """Progress in steps (tables built, queries run)."""

    def __init__(self, total: int, progress: Progress | None):
        self.total, self.done, self.progress = total, 0, progress

    def message(self, text: str) -> None:
        if self.progress:
            self.progress(self.done, self.total, text)

    def tick(self, text: str) -> None:
        self.done += 1
        self.message(text)


def _table_key(config_settings: Settings, settings: Settings, posts: Sequence[Post] | None) -> tuple | None:
    """None: the stored table will do; else the chunking that needs a scratch table."""
    if posts is None and _chunking(config_settings) == _chunking(settings):
        return None
    return _chunking(config_settings)


def _first_per_key(keys: Sequence[tuple | None], applied: Sequence[Settings]) -> list[tuple[tuple, Settings]]:
    first: dict[tuple, Settings] = {}
    for key, config_settings in zip(keys, applied, strict=True):
        if key is not None:
            first.setdefault(key, config_settings)
    return list(first.items())


def _describe(settings: Settings) -> str:
    if settings.chunk_strategy == "fixed":
        return f"fixed {settings.fixed_chars} chars, {settings.fixed_overlap} overlap"
    return f"paragraph {settings.chunk_tokens} tokens"


def _stored_posts(store: Store, notes: list[str]) -> list[Post]:
    """The stored posts rebuilt from their raw text, to re-chunk them in a scratch table."""
    from core.ingest import rebuild_posts

    posts, skipped = rebuild_posts(store, [row["post_id"] for row in store.list_posts()])
    if not posts:
        raise ValueError("no stored post can be re-chunked: ingest posts first")
    notes.extend(f"not in the re-chunked tables: {why}" for why in skipped)
    return posts


def _scratch_table(
    posts: Sequence[Post], config_settings: Settings, work: Path, embedder: CachingEmbedder
) -> Store:
    """A scratch table of `posts` chunked as `config_settings` says, in sync with them."""
    import hashlib

    from core.ingest import ingest_posts
    from core.store import Store

    # The model is part of the folder name: a table's vectors can't be mixed with another model's.
    model = hashlib.sha256(embedder.model_id.encode()).hexdigest()[:8]
    folder = work / "-".join([*(str(v) for v in _chunking(config_settings)), model])
    store = Store(folder)
    stale = set(store.post_states()) - {post.post_id for post in posts}
    if stale:
        store.delete_posts(sorted(stale))
    report = ingest_posts(
        list(posts), config_settings.replace(data_dir=folder), store=store, embedder=embedder
    )
    failed = [f"{o.post_id}: {o.message}" for o in report.outcomes if o.status == "failed"]
    if not report.outcomes or len(failed) == len(report.outcomes):
        raise ValueError(
            f"no post could be ingested for chunking {_describe(config_settings)}: {'; '.join(failed)}"
        )
    return store


def _run_config(
    queries: Sequence[Query],
    qrels: Mapping[str, Mapping[str, int]],
    config: EvalConfig,
    config_settings: Settings,
    k: int,
    store: Store,
    embedder: Embedder,
    step: _Steps,
) -> ConfigResult:
    from core.search import search

    search_settings = ranking_settings(config_settings, k)
    notes: dict[str, None] = {}
    rerank_failed = 0

    def retrieve(text: str) -> list[tuple[str, str]]:
        nonlocal rerank_failed
        result = search(text, search_settings, store=store, embedder=embedder)
        notes.update(dict.fromkeys(result.notes))
        # A failed reranker keeps the fused order (no rerank score): that row measures no reranking.
        if config_settings.reranker != "none" and result.candidates:
            rerank_failed += getattr(result.candidates[0], "rerank_score", None) is None
        return [(hit.post_id, hit.text) for hit in result.hits]

    def after_each(result: QueryResult) -> None:
        step.tick(f"{config.name}: {result.query_id}")

    report = run_eval(queries, qrels, retrieve, k=k, name=config.name, after_each=after_each)
    table = "stored" if store.data_dir == config_settings.data_dir else store.data_dir.name
    if rerank_failed:
        notes[f"reranking failed on {rerank_failed} of {len(queries)} queries (fused order kept)"] = None
    return ConfigResult(config, report, store.counts()[1], table, list(notes))
