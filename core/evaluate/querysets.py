"""Query sets to evaluate: the bundled demo set, or uploaded queries and judgements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.evaluate.loaders import decode_upload, load_qrels, load_queries, read_qrels, read_queries
from core.evaluate.metrics import Query
from core.models import Post
from core.parse import parse_paths

DEMO_DIR = Path(__file__).resolve().parents[2] / "data" / "demo"


@dataclass
class QuerySet:
    """Queries with their judgements, and the posts to search (None: the stored table)."""

    name: str
    queries: list[Query]
    qrels: dict[str, dict[str, int]]
    posts: list[Post] | None = None
    warnings: list[str] = field(default_factory=list)
    off_topic: list[Query] = field(default_factory=list)  # questions the posts do not answer (answers)


def demo_set(demo_dir: Path = DEMO_DIR) -> QuerySet:
    """The bundled demo set (data/demo/eval), searched in scratch tables of the demo blog's posts."""
    queries = load_queries(demo_dir / "eval" / "queries.jsonl")
    qrels = load_qrels(demo_dir / "eval" / "qrels.tsv")
    posts = parse_paths([demo_dir / "posts"]).posts
    off_topic = load_queries(demo_dir / "eval" / "offtopic.jsonl")
    return QuerySet("demo", queries, qrels, posts, check_set(queries, qrels), off_topic)


def uploaded_set(
    queries_file: tuple[str, bytes],
    qrels_file: tuple[str, bytes],
    off_topic_file: tuple[str, bytes] | None = None,
) -> QuerySet:
    """A set from uploaded files (name, bytes), searched in the stored table; ValueError names file and line."""
    queries = read_queries(decode_upload(*queries_file), queries_file[0])
    qrels = read_qrels(decode_upload(*qrels_file), qrels_file[0])
    off_topic = read_queries(decode_upload(*off_topic_file), off_topic_file[0]) if off_topic_file else []
    return QuerySet("uploaded", queries, qrels, None, check_set(queries, qrels), off_topic)


def check_set(queries: Sequence[Query], qrels: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Warnings about a set whose files don't match; ValueError when nothing in it can be scored."""
    if not queries:
        raise ValueError("the queries file holds no query")
    ids = {q.id for q in queries}
    judged = [q for q in queries if q.id in qrels]
    if not judged and not any(q.evidence for q in queries):
        raise ValueError(
            "no query has judgements in the qrels file (do the query ids match?) or evidence quotes: "
            "nothing to score"
        )
    warnings = []
    unknown = sorted(set(qrels) - ids)
    if unknown:
        shown = ", ".join(unknown[:5]) + ("…" if len(unknown) > 5 else "")
        warnings.append(f"the qrels judge {len(unknown)} query ids that are not in the queries file: {shown}")
    if len(judged) < len(queries):
        warnings.append(
            f"{len(queries) - len(judged)} of {len(queries)} queries have no judgements: only their evidence "
            "and latency count"
        )
    return warnings
