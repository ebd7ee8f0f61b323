"""The ingest report's summary line (core/ingest/report.py)."""

from __future__ import annotations

from core.ingest.report import IngestReport
from core.models import ParseError


def test_the_summary_counts_files_with_warnings_not_warnings() -> None:
    one = IngestReport(warnings=[ParseError("hive.ghost.json", "no site address")])
    assert one.summary().endswith("; 1 file read with a warning")
    # One export that warns twice (its site address, a left-out draft) is still one file.
    twice = IngestReport(
        warnings=[
            ParseError("hive.ghost.json", "no site address"),
            ParseError("hive.ghost.json", "left out 1 draft"),
            ParseError("notes.md", "not UTF-8"),
        ]
    )
    assert twice.summary().endswith("; 2 files read with warnings")
