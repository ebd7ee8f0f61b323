"""The static site against the server, and its speed, in headless Chromium (`make bench-static`).

Ingests the demo blog into a scratch data dir (or uses --data-dir), exports it with
`inkwell export --static`, serves the folder with Python's http.server on 127.0.0.1 and asks every
question of the sets below in the page, and the same questions through `inkwell ask --answer-mode
extractive --json` (the real command, run in this process by click's runner so the model loads once).

Parity: the same first quoted post, and the same declines (both decline or both answer). Follow-ups
too: each pair of FOLLOWUP_SETS is asked after the server's answer to its first question, in the page
(`window.inkwell.ask(question, conversation)`) and through `take_turn` with the same conversation.
Speed: the first answer on a cold cache (a fresh browser opens the page and the first question is
asked at once, by the form, as a reader would: from pressing Enter to the answer on the page, which
waits for the model), median of COLD_RUNS; model load (index, vectors, tokenizer and the int8 model
fetched, the session built and run once) in a fresh browser; question → reply per question (embedding, search, answer; the page's own
clock), p50 and p95; page weight (every file the page fetched). Also: the cosine between the page's
question vector (ONNX int8 in WebAssembly) and the Python embedder's, per question.

    python bench/static.py [--data-dir DIR] [--out bench/results/static.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SETS = {
    "demo": "data/demo/eval/queries.jsonl",
    "heldout": "data/demo/eval/heldout.jsonl",
    "offtopic": "data/demo/eval/offtopic.jsonl",
    "de": "data/demo/eval/queries_de.jsonl",
    "fr": "data/demo/eval/queries_fr.jsonl",
    "tr": "data/demo/eval/queries_tr.jsonl",
}

FOLLOWUP_SETS = {
    "followups": "data/demo/eval/followups.jsonl",
    "fu-more": "data/demo/eval/followups_more.jsonl",
    "fu-held": "data/demo/eval/followups_heldout.jsonl",
    "fu-unans": "data/demo/eval/followups_unanswerable.jsonl",
}

COLD_RUNS = 3


def cold_first_answer(playwright, url: str, question: str) -> float:
    """Seconds from asking `question` on a page just opened in a fresh browser to its answer shown."""
    from tests.static_support import LOAD_TIMEOUT, launch_chromium

    browser = launch_chromium(playwright)
    try:
        page = browser.new_page()
        page.goto(url + "index.html", wait_until="domcontentloaded")
        page.fill("#inkwell-question", question)
        started = time.perf_counter()
        page.press("#inkwell-question", "Enter")
        page.wait_for_selector("#inkwell-answer[data-mode]", state="attached", timeout=LOAD_TIMEOUT)
        return time.perf_counter() - started
    finally:
        browser.close()


def questions() -> list[tuple[str, str]]:
    out = []
    for name, path in SETS.items():
        for line in (ROOT / path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append((name, json.loads(line)["text"]))
    return out


def server_replies(data_dir: str, asked: list[str]) -> list[dict]:
    from click.testing import CliRunner

    from core.cli import main

    runner = CliRunner()
    out = []
    for question in asked:
        result = runner.invoke(
            main, ["ask", question, "--answer-mode", "extractive", "--json", "--data-dir", data_dir]
        )
        out.append(json.loads(result.stdout))
    return out


def followups() -> list[tuple[str, str, str]]:
    """(set, first question, follow-up) of FOLLOWUP_SETS."""
    out = []
    for name, path in FOLLOWUP_SETS.items():
        for line in (ROOT / path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out.append((name, row["previous"], row["followup"]))
    return out


def server_followups(settings, asked: list[tuple[str, str, str]]) -> list[tuple[list[dict], dict]]:
    """Each follow-up's conversation (the first question and the server's answer to it) and the
    server's reply to the follow-up after it, as `inkwell ask --json` names its fields."""
    from core.answer import take_turn
    from core.embed import get_embedder
    from core.store import Store

    store, embedder = Store(settings.data_dir), get_embedder(settings)
    out = []
    for _, previous, followup in asked:
        first = take_turn(previous, settings, store=store, embedder=embedder, mode="extractive")
        conversation = [
            {"role": "user", "content": previous},
            {"role": "assistant", "content": "".join(first.reply)},
        ]
        turn = take_turn(
            followup, settings, store=store, embedder=embedder, history=conversation, mode="extractive"
        )
        "".join(turn.reply)
        sentences = [{"post_id": q.post_id} for q in turn.reply.quotes]
        out.append((conversation, {"answer_mode": turn.reply.mode, "sentences": sentences}))
    return out


def ingest_demo(data_dir: str) -> None:
    from core.config import Settings
    from core.ingest import ingest_paths

    ingest_paths([ROOT / "data" / "demo" / "posts"], Settings.load({"data_dir": data_dir}, environ={}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", help="an ingested data dir (default: the demo blog, ingested now)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "static.json"))
    args = parser.parse_args()

    import numpy as np
    from playwright.sync_api import sync_playwright

    from core.config import Settings
    from core.embed import get_embedder
    from core.publish import export_static
    from tests.static_support import ask, first_post, serve_folder, static_page

    scratch = Path(tempfile.mkdtemp(prefix="inkwell-static-bench-"))
    data_dir = args.data_dir or str(scratch / "db")
    if not args.data_dir:
        ingest_demo(data_dir)
    settings = Settings.load({"data_dir": data_dir}, environ={})
    report = export_static(settings, scratch / "site")
    print(report.summary())

    asked = questions()
    texts = [q for _, q in asked]
    served = server_replies(data_dir, texts)
    embedder = get_embedder(settings)
    python_vectors = embedder.embed(texts)
    follow = followups()
    follow_served = server_followups(settings, follow)

    with sync_playwright() as playwright, serve_folder(scratch / "site") as url:
        cold = [cold_first_answer(playwright, url, texts[0]) for _ in range(COLD_RUNS)]
        started = time.perf_counter()
        with static_page(playwright, url) as page:
            wall_load = time.perf_counter() - started
            load = page.evaluate("window.inkwell.loadSeconds")
            pages = [ask(page, q) for q in texts]
            page_vectors = page.evaluate("qs => Promise.all(qs.map(q => window.inkwell.embed(q)))", texts)
            follow_pages = [
                page.evaluate("([q, c]) => window.inkwell.ask(q, c)", [followup, conversation])
                for (_, _, followup), (conversation, _) in zip(follow, follow_served, strict=True)
            ]
    # Every file the page fetches on load: all the export wrote but the vendor packages' license notes
    # and the words' table, fetched when a missing word's decision first needs it.
    weight = sum(
        v
        for k, v in report.sizes.items()
        if not k.endswith(("package.json", "LICENSE")) and not k.startswith("data/words.")
    )
    words_weight = sum(v for k, v in report.sizes.items() if k.startswith("data/words."))

    def row(name: str, question: str, server: dict, static: dict, cosine: float | None) -> dict:
        return {
            "set": name,
            "question": question,
            "server_post": first_post(server),
            "static_post": first_post(static),
            "server_declined": server["answer_mode"] == "none",
            "static_declined": static["mode"] == "none",
            "seconds": static["seconds"],
            "cosine": cosine,
        }

    rows = [
        row(name, question, server, static, float(np.dot(np.asarray(pv, dtype=np.float32), sv)))
        for (name, question), server, static, pv, sv in zip(
            asked, served, pages, page_vectors, python_vectors, strict=True
        )
    ]
    rows += [
        row(name, followup, server, static, None)
        for (name, _, followup), (_, server), static in zip(follow, follow_served, follow_pages, strict=True)
    ]
    print(f"{'set':9} {'n':>3} {'same post':>10} {'same decl.':>10} {'answered s/p':>13}")
    summary = {}
    for name in [*SETS, "all", *FOLLOWUP_SETS]:
        part = (
            [r for r in rows if r["set"] in SETS] if name == "all" else [r for r in rows if r["set"] == name]
        )
        same_post = sum(r["server_post"] == r["static_post"] for r in part)
        same_decline = sum(r["server_declined"] == r["static_declined"] for r in part)
        answered = (sum(not r["server_declined"] for r in part), sum(not r["static_declined"] for r in part))
        summary[name] = {
            "questions": len(part),
            "same_first_post": same_post,
            "same_decline": same_decline,
            "answered_server": answered[0],
            "answered_static": answered[1],
        }
        print(f"{name:9} {len(part):3} {same_post:10} {same_decline:10} {answered[0]:>6}/{answered[1]:<6}")
    seconds = sorted(r["seconds"] for r in rows if r["set"] == "demo")
    cosines = [r["cosine"] for r in rows if r["cosine"] is not None]
    rows_asked = [r for r in rows if r["set"] in SETS]  # the follow-ups embed two or four texts each
    speed = {
        "cold_first_answer_seconds": statistics.median(cold),
        "model_load_seconds": load,
        "page_ready_seconds": wall_load,
        "demo_answer_p50_ms": statistics.median(seconds) * 1000,
        "all_answer_p50_ms": statistics.median(r["seconds"] for r in rows_asked) * 1000,
        "all_answer_p95_ms": sorted(r["seconds"] for r in rows_asked)[int(0.95 * (len(rows_asked) - 1))]
        * 1000,
        "followup_answer_p50_ms": statistics.median(r["seconds"] for r in rows if r["set"] not in SETS)
        * 1000,
        "page_weight_bytes": weight,
        "words_table_bytes": words_weight,
        "vector_bytes_per_1000_chunks": report.vector_bytes_per_1000_chunks,
        "data_bytes_per_1000_chunks": report.data_bytes_per_1000_chunks,
        "int8_cosine_min": min(cosines),
        "int8_cosine_mean": statistics.fmean(cosines),
    }
    for key, value in speed.items():
        print(f"{key}: {value:,.4f}" if isinstance(value, float) else f"{key}: {value:,}")
    for r in rows:
        if r["server_post"] != r["static_post"] or r["server_declined"] != r["static_declined"]:
            print(
                f"  differs [{r['set']}] {r['question']!r}: server {r['server_post']} / page {r['static_post']}"
            )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "speed": speed, "rows": rows}, indent=1), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
