"""The Evaluate page through AppTest: the real demo set, real scratch tables, the real bundled embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.store import Store
from tests.conftest import isolate_app, open_app, shown

PAGE = "pages/quality.py"
TIMEOUT = 300  # the run loads the embedding model and embeds the demo blog into a scratch table


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data dir for the app, and none of the developer's own keys, URLs or INKWELL_* settings."""
    return isolate_app(monkeypatch, tmp_path / "db")


def open_page(**secrets: str) -> AppTest:
    return open_app(PAGE, timeout=TIMEOUT, **secrets)


def test_demo_set_runs_two_configurations_side_by_side(data_dir):
    at = open_page()
    assert shown(at.title) == ["Evaluate retrieval"]
    assert at.multiselect(key="eval_modes").value == ["dense", "hybrid"]
    assert "2 configurations: dense, hybrid" in shown(at.caption)

    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, shown(at.error)
    summary = at.dataframe[0].value
    assert list(summary["config"]) == ["dense", "hybrid"]
    assert list(summary["judged"]) == ["15/15", "15/15"]
    assert summary["ndcg@10 ×"].iloc[0] == 1.0  # dense is the baseline
    assert all(0 < value <= 1 for value in summary["ndcg@10"])
    assert all(0 < value <= 1 for value in summary["evidence_hit@10"])  # the demo set has quotes now
    per_query = at.dataframe[1].value
    assert len(per_query) == 15 and per_query["query"].iloc[0].startswith("What does the author think")
    assert {"dense · ndcg@10", "hybrid · ndcg@10", "dense · found", "hybrid · found"} <= set(
        per_query.columns
    )
    assert per_query["hybrid · found"].str.match(r"\d/\d").all()
    # Readable headers, shown in full (the keys stay as in the downloads).
    config = {k: v for k, v in json.loads(at.dataframe[0].proto.columns).items()}
    labels = {
        key: config[key]["label"] for key in ("ndcg@10", "mrr@10 ×", "evidence_hit@10", "latency_p50_ms")
    }
    assert labels == {
        "ndcg@10": "nDCG@10",
        "mrr@10 ×": "MRR@10 ×",
        "evidence_hit@10": "evidence hit@10",
        "latency_p50_ms": "latency p50 (ms)",
    }
    assert [k for k, c in config.items() if not isinstance(c.get("width"), int)] == ["_index"]  # hidden
    per_query_config = json.loads(at.dataframe[1].proto.columns)
    assert per_query_config["dense · ndcg@10"]["label"] == "dense · nDCG@10"
    assert per_query_config["evidence"]["label"] == "quotes"
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Download JSON", "Download CSV (one row per configuration and query)"]
    # The demo set searched a scratch table: the user's table was never created.
    assert Store(data_dir).counts() == (0, 0)
    assert (data_dir / "eval-tables").is_dir()


def test_bad_upload_is_a_clear_error_with_its_line(data_dir):
    at = open_page()
    at.radio(key="eval_source").set_value("upload").run()
    assert "Upload both files to run this set." in shown(at.info)
    assert at.button(key="eval_run").disabled
    at.file_uploader(key="eval_queries").set_value(
        [("queries.jsonl", b'{"id": "q1", "text": "bees?"}\n{"id": "q2"}\n', "application/json")]
    )
    at.file_uploader(key="eval_qrels").set_value(
        [("qrels.tsv", b"q1\tbees\t1\n", "text/tab-separated-values")]
    )
    at.run()
    assert not at.exception, at.exception
    assert shown(at.error) == ['Cannot use these files: queries.jsonl:2: missing or empty "text"']
    assert at.button(key="eval_run").disabled


def test_uploaded_set_on_an_empty_table_says_what_to_do(data_dir):
    at = open_page()
    at.radio(key="eval_source").set_value("upload").run()
    at.file_uploader(key="eval_queries").set_value(
        [("q.jsonl", b'{"id": "q1", "text": "bees?"}\n', "text/plain")]
    )
    at.file_uploader(key="eval_qrels").set_value([("r.tsv", b"q1\tbees\t1\n", "text/plain")])
    at.run()
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    assert shown(at.error) == ["Evaluation failed: nothing is stored yet: ingest posts first"]


def test_evaluate_is_for_the_owner(data_dir):
    at = open_page(admin_password="s3cret-owner")
    assert "Evaluating retrieval is for the site owner." in " ".join(shown(at.info))
    assert not [b for b in at.button if b.key == "eval_run"]
