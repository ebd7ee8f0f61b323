"""What an ingest did, post by post: the report the CLI prints and the Ingest page shows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.models import ParseError
from core.text import plural

if TYPE_CHECKING:
    from core.llm.structured import LLMStats

#: progress(done, total, message), called as an ingest goes.
Progress = Callable[[int, int, str], None]


@dataclass
class PostOutcome:
    post_id: str
    title: str
    source: str
    status: str  # new | updated | unchanged | failed | removed (stored, and now a draft in its file)
    chunks: int = 0
    message: str = ""
    # With LLM preparation: "ok" | "fallback" | "failed" | "skipped" (see core/prepare/), what happened
    # (`note`), and how many sentences were rewritten.
    llm: str = ""
    note: str = ""
    rewritten: int = 0

    def to_json(self) -> dict:
        data = dict(self.__dict__)
        if not self.llm:  # without LLM preparation the report keeps its original keys
            for key in ("llm", "note", "rewritten"):
                data.pop(key)
        return data


@dataclass
class IngestReport:
    outcomes: list[PostOutcome] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    warnings: list[ParseError] = field(default_factory=list)  # read, but not as written (e.g. not UTF-8)
    chunks_embedded: int = 0
    chunks_reused: int = 0
    seconds: float = 0.0
    llm: LLMStats | None = None  # requests, cache hits and tokens of the LLM preparation, when it ran
    notes: list[str] = field(default_factory=list)  # e.g. which embedder a new table got, and why
    change_id: str | None = None  # the change log's id of what this ingest wrote (core/store/changes.py)

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def failed(self) -> int:
        return self.count("failed") + len(self.errors)

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def summary(self) -> str:
        text = (
            f"{self.count('new')} new, {self.count('updated')} updated, {self.count('unchanged')} unchanged, "
            f"{self.failed} failed; {plural(self.chunks_embedded, 'chunk')} embedded, "
            f"{self.chunks_reused} reused from cache ({self.seconds:.1f} s)"
        )
        if removed := self.count("removed"):
            text += f"; {plural(removed, 'post')} removed: now a draft"
        if self.warnings:
            # One file may warn more than once (a Ghost export: a site address and a left-out draft).
            files = len({w.source for w in self.warnings})
            many = len(self.warnings) > files
            text += f"; {plural(files, 'file')} read with {'warnings' if many else 'a warning'}"
        if self.llm is not None:
            marked = sum(1 for o in self.outcomes if o.llm in ("fallback", "failed"))
            text += f"; {self.llm.summary()}; {plural(marked, 'post')} with LLM fallbacks"
        return "; ".join([text, *self.notes])

    def to_json(self) -> dict:
        return {
            "new": self.count("new"),
            "updated": self.count("updated"),
            "unchanged": self.count("unchanged"),
            **({"removed": self.count("removed")} if self.count("removed") else {}),
            "failed": self.failed,
            "chunks_embedded": self.chunks_embedded,
            "chunks_reused": self.chunks_reused,
            "seconds": round(self.seconds, 3),
            "posts": [o.to_json() for o in self.outcomes],
            "errors": [{"source": e.source, "message": e.message} for e in self.errors],
            **(
                {"warnings": [{"source": w.source, "message": w.message} for w in self.warnings]}
                if self.warnings
                else {}
            ),
            **({"llm": self.llm.to_json()} if self.llm is not None else {}),
            **({"notes": self.notes} if self.notes else {}),
            **({"change_id": self.change_id} if self.change_id else {}),
        }
