"""Plain data passed between pipeline stages."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Block:
    """One paragraph of cleaned text, or a heading (which becomes the `section` of what follows).

    A list is one block with an item per line; `list_style` says so ("bullet" or "ordered", "" for
    anything else), so a reader sees it drawn as a list."""

    text: str
    heading: bool = False
    list_style: str = ""


@dataclass
class Post:
    """A post as parsed from one input, before chunking.

    `blocks` is the cleaned text in reading order. `raw` is what the author gave us, kept so the post
    can be re-chunked or re-embedded later without re-uploading. `prechunked` is set only for imported
    chunks.json files, whose chunks are kept exactly as they were cut. `url` is the post's web address
    on the author's blog ("" when unknown), where a reader's citation links to. `export` names the
    blog platform whose export file the post was read from (core/parse/exported.py PLATFORMS; "" for
    any other input), so a newer export of the same blog may replace it; `exported` is when that
    export was made (core/parse/exported.py export_time: its own date, else its file name's; "" unknown).
    """

    post_id: str
    title: str
    blocks: list[Block]
    raw: str
    source: str
    collection: str = "writings"
    date: str = ""
    tags: list[str] = field(default_factory=list)
    format: str = "text"
    prechunked: list[PreChunk] | None = None
    url: str = ""
    export: str = ""
    exported: str = ""

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


@dataclass
class PreChunk:
    """A chunk that arrives already cut (chunks.json import)."""

    text: str
    section: str = ""
    keywords: list[str] = field(default_factory=list)
    chunk_id: str = ""


@dataclass
class Chunk:
    chunk_id: str
    post_id: str
    index: int
    text: str
    section: str = ""
    tokens: int = 0
    keywords: list[str] = field(default_factory=list)


@dataclass
class ParseError:
    """An input that could not be turned into posts; the message names the file and the reason."""

    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.message}"


@dataclass(frozen=True)
class LeftOutDraft:
    """A post its file marks unpublished (front matter `draft: true`, `published: false`), left out when
    parsed: a post of that id stored from the same file is removed by the ingest (its author
    unpublished it), as core/ingest/pipeline.py `ingest_posts(drafts=…)` does."""

    post_id: str
    title: str
    source: str


@dataclass
class ParseResult:
    posts: list[Post] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    # Inputs read, but not quite as written (e.g. not UTF-8: read as Windows-1252); same shape as errors.
    warnings: list[ParseError] = field(default_factory=list)
    drafts: list[LeftOutDraft] = field(default_factory=list)  # left out as unpublished (and warned of)

    def extend(self, other: ParseResult) -> None:
        self.posts.extend(other.posts)
        self.errors.extend(other.errors)
        self.warnings.extend(other.warnings)
        self.drafts.extend(other.drafts)


@dataclass
class Hit:
    """One retrieved chunk. `relevance` is 0..1, higher is better; `rank` starts at 1.

    `relevance` is what orders the hits and what the threshold rules use (see core/search/retrieve.py for
    its definition in each retrieval mode). The other scores say why the chunk was found: its rank in
    the dense search and its cosine relevance (in hybrid mode computed even when only the keyword
    search found it), its rank and BM25 score in the keyword search, None where a search did not
    return it or did not run, its fused score in hybrid mode, and its rerank score (0..1) when a
    reranker judged it (core/search/rerank.py; `relevance` is then that score). They are left out of
    `to_json()`, whose keys stay stable; `scores()` has them.
    """

    post_id: str
    title: str
    collection: str
    chunk_id: str
    section: str
    text: str
    keywords: list[str]
    relevance: float
    rank: int
    date: str = ""
    passed: bool = True
    url: str = ""  # the post's address on the blog ("" when unknown)
    dense_relevance: float | None = None
    dense_rank: int | None = None
    keyword_score: float | None = None
    keyword_rank: int | None = None
    fused_score: float | None = None
    rerank_score: float | None = None

    def scores(self) -> dict:
        """The per-retriever contributions ("why this chunk"), None where a retriever missed it."""
        return {
            "dense_relevance": self.dense_relevance,
            "dense_rank": self.dense_rank,
            "keyword_score": self.keyword_score,
            "keyword_rank": self.keyword_rank,
            "fused_score": self.fused_score,
            "rerank_score": self.rerank_score,
        }

    def to_json(self) -> dict:
        return {
            "post_id": self.post_id,
            "title": self.title,
            "collection": self.collection,
            "chunk_id": self.chunk_id,
            "section": self.section,
            "text": self.text,
            "keywords": list(self.keywords),
            "relevance": round(float(self.relevance), 6),
            "rank": self.rank,
            "url": self.url,
        }
