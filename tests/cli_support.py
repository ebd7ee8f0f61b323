"""The CLI tests' folder of posts and a way to run `inkwell` in-process (click's runner).

    from tests.cli_support import corpus, run  # noqa: F401  (fixture)

`corpus` here is a folder of three files (garden, trains, a bundle with tea); tests/conftest.py's
`corpus` is the app tests' three ingested posts: a module importing this one uses this one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from core.cli import main
from tests.conftest import write


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "posts"
    write(
        root / "essays" / "garden.md",
        "---\ntitle: The Garden\nslug: garden\ndate: 2023-04-02\n---\n\n## Tomatoes\n\n"
        "I grow six kinds of tomatoes against the south wall. The Brandywines split in wet Augusts.\n\n"
        "## Compost\n\nThe compost heap takes all kitchen scraps except citrus peel.\n",
    )
    write(root / "essays" / "trains.txt", "Night Trains\n\nI took the sleeper from Vienna to Rome in 2019.\n")
    write(
        root / "notes" / "bundle.txt",
        "=== POST START: Tea ===\nGreen tea at 80 degrees, never boiling.\n=== POST END ===\n",
    )
    return root


def run(*args: str, data_dir: Path, input: str | None = None):
    result = CliRunner().invoke(
        main, [*args, "--data-dir", str(data_dir)], input=input, catch_exceptions=False
    )
    return result
