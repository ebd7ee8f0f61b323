"""The architecture of core/ is checked by import-linter (contracts in pyproject.toml): packages are
layered, no package's modules import each other in a circle, and core never imports Streamlit.

Each contract is also shown to fail: a copy of core/ with one bad import added must break it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

LINT = Path(sys.executable).with_name("lint-imports")


def lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH first, so the copy's `core` is analysed and not the installed one.
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(
        [str(LINT), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_core_keeps_its_contracts() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def test_core_has_no_streamlit_import() -> None:
    # The same rule read off the files, so it holds even where import-linter is not installed.
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "core").rglob("*.py")
        if "import streamlit" in path.read_text() or "from streamlit" in path.read_text()
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # generate ← question already; question ← generate closes a circle inside core.answer.
        ("answer/generate.py", "from core.answer import question", "no import cycles"),
        # A lower layer (store) reaching up to a higher one (search).
        ("store/tables.py", "from core.search import search", "core is layered"),
        ("text/tokens.py", "import streamlit", "core never imports Streamlit"),
    ],
)
def test_a_bad_import_breaks_a_contract(tmp_path: Path, module: str, line: str, broken: str) -> None:
    shutil.copytree(ROOT / "core", tmp_path / "core", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    target = tmp_path / "core" / module
    target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    result = lint(tmp_path)
    assert result.returncode != 0
    assert f"{broken}" in result.stdout and "BROKEN" in result.stdout.split(broken, 1)[1].splitlines()[0]
