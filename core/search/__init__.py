"""Finding the chunks that answer a question: dense, BM25 or hybrid retrieval (retrieve), optional
reranking (rerank), collections routing (route), post-level views (posts), each table's floor and the relevance bar moved to it
(floor) and the indexes loaded beside the embedding model on a process's first question (warm).
"""

from __future__ import annotations

from core.search.floor import bar_for_table, table_floor
from core.search.posts import posts_about
from core.search.rerank import prepare_reranker, rerank
from core.search.retrieve import Retrieval, search
from core.search.route import (
    Route,
    RulesError,
    load_rules,
    read_rules_text,
    route,
    route_and_search,
    rules_path,
    rules_template,
    save_rules,
)

__all__ = [
    "Retrieval",
    "Route",
    "RulesError",
    "bar_for_table",
    "load_rules",
    "posts_about",
    "prepare_reranker",
    "read_rules_text",
    "rerank",
    "route",
    "route_and_search",
    "rules_path",
    "rules_template",
    "save_rules",
    "search",
    "table_floor",
]
