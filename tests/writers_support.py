"""Concurrent writers on one existing table: the harness of tests/integration/test_concurrent_writers.py.

Real `inkwell ingest` processes (and a process editing a chunk through `core.ingest.edit_chunk`, the
Inspect page's path) write to one table at once. Vectors come from an OpenAI-compatible embeddings
server on 127.0.0.1 whose vector is a hash of the text: deterministic, and no model to load in each
process (the write paths are the same with any embedder), so a run takes seconds and the processes'
commits overlap as much as they can.

The final table is compared with a reference built by ingesting the same folders one after the other:
the same posts with the same content hashes and chunk counts, the same chunks (ids, texts, sections),
every chunk's stored hash and vector those of its own text (nothing mixed from two versions), and a
follow-up ingest that finds nothing to do. Keywords may legitimately differ from the reference: they
are scored against the corpus as stored when each ingest started (core/chunk/keywords.py), which
depends on who finished first.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tests.servers import Reply, ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
DIM = 32
EMBED_MODEL = "hash-embed"
CHUNK_TOKENS = "40"  # several chunks per post, so a post's chunks are replaced as a set


def hash_vector(text: str) -> list[float]:
    """The embedding server's vector for `text` (unit length)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    raw = np.frombuffer(digest, dtype=np.uint8)[:DIM].astype(np.float32) - 127.5
    return (raw / np.linalg.norm(raw)).tolist()


class HashEmbedder:
    """In-process, the embedding server's vectors (for tests that need no server)."""

    model_id = "openai:hash-embed"
    dim = DIM

    def embed(self, texts):
        return np.array([hash_vector(t) for t in texts], dtype=np.float32).reshape(-1, DIM)

    query = embed


@contextmanager
def embedding_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        server.responder = lambda body: Reply(vectors=[hash_vector(t) for t in body.get("input") or []])
        yield server


def environ(server: ScriptedOpenAIServer, data_dir: Path, chunk_tokens: str = CHUNK_TOKENS) -> dict[str, str]:
    """The writers' environment: the hash embedder, small chunks, nothing from the developer's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INKWELL_", "OPENAI_"))}
    env.update(
        INKWELL_DATA_DIR=str(data_dir),
        INKWELL_EMBED_BACKEND="openai",
        INKWELL_EMBED_BASE_URL=server.base_url,
        INKWELL_EMBED_MODEL=EMBED_MODEL,
        INKWELL_CHUNK_TOKENS=chunk_tokens,
        PYTHONPATH=str(ROOT),
        OMP_WAIT_POLICY="PASSIVE",
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


def settings_from(env: Mapping[str, str]):
    from core.config import Settings

    return Settings.load(environ={k: v for k, v in env.items() if k.startswith(("INKWELL_", "OPENAI_"))})


# The corpus ------------------------------------------------------------------------------------------

_WORDS = [
    *("oak", "walnut", "cherry", "plane", "chisel", "saw", "joint", "glue", "clamp", "grain", "board"),
    *("bench", "stool", "table", "drawer", "finish", "sawmill", "kiln", "moisture", "shaving", "mallet"),
    *("dovetail", "tenon", "mortise", "lathe", "varnish"),
]


def paragraphs(seed: str, count: int = 3) -> str:
    """A few deterministic paragraphs of sentences (seeded by `seed`)."""
    rng = np.random.default_rng(int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16))
    out = []
    for _ in range(count):
        sentences = []
        for _ in range(4):
            words = [str(_WORDS[i]) for i in rng.integers(0, len(_WORDS), 9)]
            sentences.append(" ".join(words).capitalize() + ".")
        out.append(" ".join(sentences))
    return "\n\n".join(out)


def post(title: str, body: str, collection: str = "essays") -> str:
    return f"---\ntitle: {title}\ncollection: {collection}\n---\n\n# {title}\n\n{body}\n"


BASE_POSTS = {
    "common": post("Common", paragraphs("common")),
    "quiet": post("Quiet", paragraphs("quiet"), "notes"),
    **{f"post-{i}": post(f"Post {i}", paragraphs(f"post-{i}")) for i in range(8)},
}


def write_posts(folder: Path, posts: Mapping[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in posts.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    return folder


def writer_folders(root: Path, writers: int) -> list[Path]:
    """Writer i's folder: `common` edited (the same edit in every folder), its own edit of post-i, and a
    new post of its own. No two folders hold different versions of one post."""
    common = post("Common", paragraphs("common") + "\n\n" + paragraphs("common edited", 2))
    folders = []
    for i in range(writers):
        folders.append(
            write_posts(
                root / f"writer-{i}",
                {
                    "common": common,
                    f"post-{i}": post(f"Post {i}", paragraphs(f"post-{i} edited", 4)),
                    f"new-{i}": post(f"New {i}", paragraphs(f"new {i}"), "notes"),
                },
            )
        )
    return folders


# Running writers -------------------------------------------------------------------------------------

EDITOR = """
import sys
from core.config import Settings
from core.ingest import edit_chunk
settings = Settings.load()
for n in range(int(sys.argv[2])):
    edit_chunk(sys.argv[1], settings, text=f"Edited by the inspector, edit {n}.", keywords=["edit", f"n{n}"])
"""
EDITED_CHUNK = "quiet#0001"


@dataclass
class Outcome:
    codes: list[int] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def tracebacks(self) -> list[str]:
        return [err for err in self.stderr if "Traceback" in err]


def run_writers(folders: list[Path], env: Mapping[str, str], edits: int = 0, timeout: float = 300) -> Outcome:
    """All writers at once (plus the chunk editor when `edits`); their exit codes and stderr."""
    # --replace: each folder's versions of the base posts replace those read from the base folder.
    commands = [[sys.executable, "-m", "core.cli", "ingest", "--replace", str(folder)] for folder in folders]
    if edits:
        commands.append([sys.executable, "-c", EDITOR, EDITED_CHUNK, str(edits)])
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            cmd, cwd=ROOT, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for cmd in commands
    ]
    outcome = Outcome()
    for proc in procs:
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            err += "\n(timed out)"
        outcome.codes.append(proc.returncode)
        outcome.stderr.append(err)
    outcome.seconds = time.perf_counter() - started
    return outcome


# The table, as compared -----------------------------------------------------------------------------


@dataclass
class Snapshot:
    posts: dict[str, tuple]  # post_id -> (content_hash, n_chunks, title, collection)
    chunks: dict[str, tuple]  # chunk_id -> (post_id, idx, section, text)
    keywords: dict[str, list[str]]
    problems: list[str]  # rows that are not self-consistent


def snapshot(data_dir: Path) -> Snapshot:
    from core.embed import content_hash, embedded_text
    from core.store import Store

    store = Store(data_dir)
    model = store.model_id() or ""
    posts_table = store.posts.to_arrow().to_pylist()
    chunk_rows = store.chunks.to_arrow().to_pylist()
    problems: list[str] = []
    posts = {
        r["post_id"]: (r["content_hash"], r["n_chunks"], r["title"], r["collection"]) for r in posts_table
    }
    if len(posts) != len(posts_table):
        problems.append(f"{len(posts_table) - len(posts)} duplicate post rows")
    chunks = {r["chunk_id"]: (r["post_id"], r["idx"], r["section"], r["text"]) for r in chunk_rows}
    if len(chunks) != len(chunk_rows):
        problems.append(f"{len(chunk_rows) - len(chunks)} duplicate chunk rows")
    counts: dict[str, int] = {}
    for row in chunk_rows:
        counts[row["post_id"]] = counts.get(row["post_id"], 0) + 1
        text = embedded_text(row["section"] or "", row["text"], row["keywords"] or [], row["title"] or "")
        if row["embed_hash"] != content_hash(model, text):
            problems.append(f"{row['chunk_id']}: embed_hash is not its text's")
        if not np.allclose(row["vector"], hash_vector(text), atol=1e-5):
            problems.append(f"{row['chunk_id']}: vector is not its text's")
    for post_id, (_, n_chunks, _, _) in posts.items():
        if counts.get(post_id, 0) != n_chunks:
            problems.append(f"{post_id}: post row says {n_chunks} chunks, {counts.get(post_id, 0)} stored")
    for post_id in set(counts) - set(posts):
        problems.append(f"{post_id}: chunks without a post row")
    keywords = {r["chunk_id"]: list(r["keywords"] or []) for r in chunk_rows}
    return Snapshot(posts, chunks, keywords, problems)


def build_base(data_dir: Path, root: Path, env: Mapping[str, str]) -> None:
    """The existing table every run starts from."""
    from core.ingest import ingest_paths

    report = ingest_paths(
        [write_posts(root / "base", BASE_POSTS)], settings_from({**env, "INKWELL_DATA_DIR": str(data_dir)})
    )
    assert report.ok and report.count("new") == len(BASE_POSTS), report.summary()


def build_reference(
    base: Path, target: Path, folders: list[Path], env: Mapping[str, str], edits: int
) -> None:
    """The same writes one after the other."""
    from core.ingest import edit_chunk, ingest_paths

    shutil.copytree(base, target)
    settings = settings_from({**env, "INKWELL_DATA_DIR": str(target)})
    for folder in folders:
        report = ingest_paths([folder], settings, replace=True)
        assert report.ok, report.summary()
    if edits:
        n = edits - 1
        edit_chunk(
            EDITED_CHUNK, settings, text=f"Edited by the inspector, edit {n}.", keywords=["edit", f"n{n}"]
        )


def compare(actual: Snapshot, reference: Snapshot) -> list[str]:
    """What differs, as readable lines (empty: exact)."""
    out = list(actual.problems)
    for post_id in sorted(set(actual.posts) | set(reference.posts)):
        if actual.posts.get(post_id) != reference.posts.get(post_id):
            out.append(
                f"post {post_id}: {actual.posts.get(post_id)} != reference {reference.posts.get(post_id)}"
            )
    for chunk_id in sorted(set(actual.chunks) | set(reference.chunks)):
        if actual.chunks.get(chunk_id) != reference.chunks.get(chunk_id):
            out.append(f"chunk {chunk_id} differs from the reference")
    if actual.keywords.get(EDITED_CHUNK) != reference.keywords.get(EDITED_CHUNK):
        out.append(f"the edited chunk's keywords: {actual.keywords.get(EDITED_CHUNK)}")
    return out
