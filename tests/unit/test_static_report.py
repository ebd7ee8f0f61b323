"""The static export's report, as `inkwell export --static` prints it."""

from __future__ import annotations

from pathlib import Path

from core.publish.site import StaticReport


def test_one_chunk_is_counted_in_the_singular():
    report = StaticReport(Path("site"), chunks=1, sentences=2, headings=0, sizes={"data/vectors.i8": 384})
    assert report.summary().startswith("wrote a static site of 1 chunk to site (")
    two = StaticReport(Path("site"), chunks=2, sentences=2, headings=0, sizes={"data/vectors.i8": 768})
    assert two.summary().startswith("wrote a static site of 2 chunks to site (")
