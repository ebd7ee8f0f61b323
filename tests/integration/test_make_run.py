"""`make run` over a table: the demo's author is named only over the demo's posts.

The Makefile is run for real (`make run`), with the real `inkwell` over a real table in a temp dir; only
its last step, `streamlit run`, is a script that writes down the author variables it was started with,
and the install step is taken as done (STAMP given), so no package is installed and no server starts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.config import Settings
from core.ingest import ingest_posts
from core.models import Block, Post
from core.store import Store

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make_run(tmp_path: Path, data_dir: Path, **env: str) -> list[str]:
    """`make run` over `data_dir`: the INKWELL_AUTHOR_NAME and _DESCRIPTION streamlit was started with
    ("<unset>" for one not set)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    venv_bin = Path(sys.executable).parent
    for name in ("inkwell", "python"):
        if not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(venv_bin / name)
    seen = tmp_path / "seen.txt"
    streamlit = bin_dir / "streamlit"
    streamlit.write_text(
        '#!/bin/sh\nprintf "%s\\n%s\\n" "${INKWELL_AUTHOR_NAME-<unset>}" '
        f'"${{INKWELL_AUTHOR_DESCRIPTION-<unset>}}" > "{seen}"\n'
    )
    streamlit.chmod(0o755)
    stamp = tmp_path / "installed"
    stamp.touch()  # newer than requirements.txt: the install step has nothing to do
    clean = {k: v for k, v in os.environ.items() if not k.startswith("INKWELL_") and k != "MAKEFLAGS"}
    environ = {**clean, "INKWELL_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT), **env}
    done = subprocess.run(
        ["make", "-s", "-C", str(ROOT), "run", f"BIN={bin_dir}", f"STAMP={stamp}"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return seen.read_text().splitlines()


def store_post(data_dir: Path, embedder, post_id: str, title: str, text: str) -> None:
    settings = Settings.load({"data_dir": data_dir}, environ={})
    post = Post(post_id, title, [Block(text)], raw=text, source=f"{post_id}.md")
    ingest_posts([post], settings, store=Store(data_dir), embedder=embedder)


def test_make_run_over_your_own_posts_never_answers_as_the_demo_author(tmp_path, embedder):
    """It did: every `make run` set INKWELL_AUTHOR_NAME=Mara Quill, so a blogger's own table, run as the
    README says, was answered 'in the voice of Mara Quill', a furniture maker, in the chat and prompt."""
    data_dir = tmp_path / "db"
    store_post(data_dir, embedder, "swarm", "The Day the Bees Swarmed", "Half the bees left in May.")
    assert make_run(tmp_path, data_dir) == ["<unset>", "<unset>"]


def test_make_run_over_the_demo_names_its_author_unless_you_do(tmp_path, embedder):
    data_dir = tmp_path / "db"
    store_post(data_dir, embedder, "why-this-blog-exists", "Why This Blog Exists", "People asked me.")
    name, description = make_run(tmp_path, data_dir)
    assert name == "Mara Quill" and description.startswith("a furniture maker in Wickham Hollow")
    assert make_run(tmp_path, data_dir, INKWELL_AUTHOR_NAME="Nell")[0] == "Nell"
