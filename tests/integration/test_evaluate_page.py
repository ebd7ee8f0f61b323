"""The Evaluate page through AppTest: the real demo set, real scratch tables, the real bundled embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.store import Store
from pages.shared.evaluating import MAX_CELL
from pages.shared.tables import header_width
from pages.shared.text import safe_answer
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
    # Headers in words, each explained on hover and shown in full (the keys stay as in the downloads).
    config = {k: v for k, v in json.loads(at.dataframe[0].proto.columns).items()}
    labels = {
        key: config[key]["label"] for key in ("ndcg@10", "mrr@10 ×", "evidence_hit@10", "latency_p50_ms")
    }
    assert labels == {
        "ndcg@10": "Ranking quality (nDCG@10)",
        "mrr@10 ×": "First right post (MRR@10) vs baseline",
        "evidence_hit@10": "Evidence found (hit@10)",
        "latency_p50_ms": "Typical search (ms)",
    }
    assert (
        config["evidence_hit@10"]["help"] == "Share of queries where a top-10 chunk holds an evidence quote."
    )
    assert all(c.get("help") for k, c in config.items() if k != "_index")  # every header explained
    widths = {k: c["width"] for k, c in config.items() if k != "_index"}
    assert all(isinstance(w, int) and w >= header_width(config[k]["label"]) for k, w in widths.items())
    per_query_config = json.loads(at.dataframe[1].proto.columns)
    assert per_query_config["dense · ndcg@10"]["label"] == "dense: ranking quality (nDCG@10)"
    assert per_query_config["evidence"]["label"] == "Quotes"
    assert per_query_config["query"]["width"] == "large"
    # Long cells are not cut: the rows are tall enough for the longest question or quote list.
    longest = max(per_query[c].astype(str).str.len().max() for c in ("query", "hybrid · found"))
    assert at.dataframe[1].proto.row_height >= 21 * min(8, -(-longest // 58))
    # The comparisons as bar charts: quality and time by configuration, nDCG per query.
    charts = at.get("vega_lite_chart")
    assert len(charts) == 3
    titles = [m for m in shown(at.markdown) if m.startswith("**")]
    assert titles == [
        "**Retrieval quality by configuration (higher is better)**",
        "**Search time (ms)**",
        "**Ranking quality (nDCG@10) per query, by configuration**",
    ]
    quality, time, per_query_chart = (json.loads(chart.proto.spec)["encoding"] for chart in charts)
    # Each measure named in full, in the table's order (Streamlit's theme would cut labels at 100 px).
    assert quality["y"]["sort"] == [
        "Posts found (recall@10)",
        "First right post (MRR@10)",
        "Ranking quality (nDCG@10)",
        "Evidence found (hit@10)",
    ]
    assert time["y"]["sort"] == ["Typical search (ms)", "Slow search (ms)"]
    assert quality["y"]["axis"]["labelLimit"] == time["y"]["axis"]["labelLimit"] == 0  # 0: no limit
    assert quality["color"]["sort"] == ["dense", "hybrid"] and quality["color"]["legend"]["labelLimit"] == 0
    # The queries in the set's order, not sorted as text (q1, q10, … q15, q2).
    assert per_query_chart["x"]["sort"] == list(per_query["id"]) == [f"q{n}" for n in range(1, 16)]
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


def test_answer_results_have_headers_in_words_and_a_chart(data_dir):
    at = open_page()
    at.button(key="eval_answers_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, shown(at.error)
    summary = json.loads(at.dataframe[0].proto.columns)
    assert summary["token_f1"]["label"] == "Words shared with the reference (F1)"
    assert summary["no_answer_on_topic"]["label"] == "Declined on topic"
    assert "lower is better" in summary["no_answer_on_topic"]["help"]
    rows_config = json.loads(at.dataframe[1].proto.columns)
    assert rows_config["answer"]["width"] == "large"
    assert at.dataframe[1].proto.row_height > 21  # answers are longer than a line: taller rows
    assert "**Answers by mode**" in shown(at.markdown) and len(at.get("vega_lite_chart")) == 1
    # The rows' own words: per row `evidence` and `on_topic` are yes/no, not the summaries' counts.
    assert rows_config["evidence"]["label"] == "Holds a quote"
    assert rows_config["evidence"]["help"].startswith("Whether the answer contains one of the question's")
    assert rows_config["on_topic"]["label"] == "On topic"
    assert rows_config["on_topic"]["help"].startswith("Whether the posts answer this question")
    # No answer is cut: a cell holds at most what MAX_LINES rows show, and a longer answer is in full below.
    answers = [row.answer for report in at.session_state["eval_answers"] for row in report.rows]
    longest = max(answers, key=len)
    assert len(longest) > MAX_CELL  # the demo set has answers longer than a row shows
    cells = at.dataframe[1].value["answer"]
    assert cells.str.len().max() <= MAX_CELL and cells.str.endswith("(in full below the table)").any()
    assert safe_answer(longest) in shown_markdown(at), "the longest answer is not shown whole"
    in_full = [e for e in at.expander if " · extractive: " in e.label.replace("\\", "")]
    assert len(in_full) == len([a for a in answers if len(a) > MAX_CELL])


def shown_markdown(at) -> list[str]:
    return [m.value for m in at.markdown]
