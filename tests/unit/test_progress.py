"""The CLI's progress for reading web sources: a bar on a terminal, a line a second elsewhere."""

from __future__ import annotations

import io
import sys

import pytest

from core.cli.sources import web_progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_whose_length_follows_the_pages_found(monkeypatch: pytest.MonkeyPatch) -> None:
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with web_progress("Reading") as progress:
        progress(1, 4, "fetching pages")
        progress(4, 10, "ingesting")
        progress(10, 10, "done")
    shown = err.getvalue()
    assert "Reading (fetching pages)" in shown and "Reading (done)" in shown
    assert "100%" in shown and "1/4: fetching pages" not in shown  # a bar drawn to its end, not lines


def test_a_log_gets_lines(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with web_progress("Reading") as progress:
        progress(1, 2, "fetching pages")
        progress(2, 2, "done")
    err = capsys.readouterr().err
    assert "1/2: fetching pages" in err and "2/2: done" in err


def test_a_log_gets_no_line_for_a_step_with_nothing_to_count(capsys: pytest.CaptureFixture[str]) -> None:
    """An address that could not be read, or no posts to ingest: no "0/0: done" lines."""
    from core.cli.ingest import progress_shown

    with web_progress("Reading") as progress:
        progress(0, 0, "0 unchanged")
        progress(0, 0, "done")
    lines = progress_shown(bar=None)
    lines(0, 0, "done")
    assert capsys.readouterr().err == ""
