"""`make bench-load`: many readers asking at once, through real Streamlit sessions, against a running app.

Starts the app (`streamlit run streamlit_app.py` on a free loopback port, the demo blog ingested into a
scratch data dir), then for each reader count (1, 8 and 32 by default, in that order, in the same run):
opens that many browser sessions, lets each one ask one of the demo questions at the same moment, and
prints, per reader count (then the same through the HTTP API, `POST /api/ask` with server-sent events,
one client thread each, time to first word = the first `delta` event):

- time to first word: from the question being sent to the first text of the answer appearing in the
  reader's chat (the first Markdown element inside the assistant's chat message), p50, p95 and max;
- answers per minute: answers completed (the reader's script run finished with an answer) over the
  round's wall time;
- errors: an error or exception shown, no answer, a dropped connection or no answer within --timeout.

With --long-question, one more reader pastes a 20,000-character question at the same moment in every
round (as a reader once did); it is left out of the row's figures, which then show whether it delayed
the others, and its own outcome is printed below the table (refused, or how long it took).

The one-reader row is the baseline of the same run. One warm-up question first (the embedder loads and
the built-in llama.cpp server starts on the first question; not counted), then --settle seconds while the
app embeds the posts' sentences for quoted answers in the background, as a freshly started app does
before its readers arrive. Every question asked in a run
is a different one (the 15 demo questions, then their German, French and Turkish versions: 60), because
llama.cpp keeps recent prompts and answers a repeated one without reading it again: a run that asked
the one reader the warm-up's question measured 0.24 s to its first word against ~20 s for a new one.

The sessions are real Streamlit sessions driven over Streamlit's own websocket protocol (what the browser
sends: a `rerun_script` BackMsg carrying the chat input's value; what it gets back: ForwardMsg deltas), so
every reader runs the whole chat page on the server as a browser would, without 32 Chromium renderers
taking the 2 CPU cores the app needs. Figures, not asserts.

    python bench/load.py                                   # 1, 8, 32 readers, today's chat
    python bench/load.py --readers 1,8 --env INKWELL_BUILTIN_SLOTS=1   # e.g. compare with one slot
    python bench/load.py --answer-mode extractive          # once the app has the answer_mode setting
    python bench/load.py --url http://127.0.0.1:8501       # an app that is already running
    python bench/load.py --readers 1,8 --long-question     # plus one reader pasting 20,000 characters
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.Markdown_pb2 import Markdown
from websockets.asyncio.client import ClientConnection, connect

from core.config import Settings

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "data" / "demo" / "eval"
QUESTION_FILES = ["queries.jsonl", "queries_de.jsonl", "queries_fr.jsonl", "queries_tr.jsonl"]
WARM_UP = "What is this blog about?"  # not one of the measured questions
LONG_QUESTION = ("Why did you start the blog? " * 715)[:20_000]
AUTHOR = ("Mara Quill", "a furniture maker in Wickham Hollow, Vermont, who left software to work with wood")
STARTUP_TIMEOUT = 120.0  # s until /_stcore/health answers
PAGE_TIMEOUT = 300.0  # s for a session's first page run
ANSWER_MODES = ("generative", "extractive")


# The app -------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def running_app(data_dir: Path, workdir: Path, env: dict[str, str]) -> Iterator[str]:
    """`streamlit run server.py` (the app and its HTTP API, as `make run`) on a free loopback port, with an
    empty secrets file so a developer's own secrets are not used, until it answers; stopped after."""
    secrets = workdir / "secrets.toml"
    secrets.write_text('inkwell_bench = "1"\n')
    port = free_port()
    command = [
        *(sys.executable, "-m", "streamlit", "run", "server.py"),
        *("--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1"),
        *("--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"),
        *("--secrets.files", str(secrets)),
    ]
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("INKWELL_", "STREAMLIT_")) and k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")
    }
    app_env = {
        **base,
        "INKWELL_DATA_DIR": str(data_dir),
        "INKWELL_AUTHOR_NAME": AUTHOR[0],
        "INKWELL_AUTHOR_DESCRIPTION": AUTHOR[1],
        "PYTHONUNBUFFERED": "1",
        "INKWELL_QUESTIONS_PER_MINUTE": "0",  # every client of the bench comes from 127.0.0.1
        **env,
    }
    log = (workdir / "streamlit.log").open("wb")
    process = subprocess.Popen(
        command, cwd=ROOT, env=app_env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the app did not start; see {workdir / 'streamlit.log'}")
            time.sleep(0.5)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)
        log.close()


def ingest_demo(data_dir: Path) -> None:
    from core.ingest import ingest_paths

    settings = Settings.load({"data_dir": data_dir}, environ={})
    report = ingest_paths([ROOT / "data" / "demo" / "posts"], settings)
    if not report.ok:
        raise SystemExit(f"ingesting the demo blog failed: {report.summary()}")


# One reader: a Streamlit session over the websocket protocol ----------------------------------------------


@dataclass
class Result:
    reader: int
    question: str
    first_word: float | None = None  # seconds from sending the question
    done: float | None = None  # seconds until the run finished with an answer
    error: str = ""
    warnings: list[str] = field(default_factory=list)


class Reader:
    """One browser session: loads the chat page, then asks questions through its chat input."""

    def __init__(self, url: str, number: int) -> None:
        self.ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
        self.number = number
        self.ws: ClientConnection | None = None
        self.page_hash = ""
        self.chat_input_id = ""

    async def open(self) -> None:
        # Origin as a browser on the app's page sends it (same origin is allowed).
        self.ws = await connect(
            self.ws_url,
            subprotocols=["streamlit"],  # type: ignore[list-item]
            origin=self.ws_url.replace("ws://", "http://").removesuffix("/_stcore/stream"),  # type: ignore[arg-type]
            max_size=None,
            open_timeout=60,
            ping_interval=None,  # a busy 2-core server answers pings late; the browser sends none either
        )
        await self._send_rerun()
        run = await asyncio.wait_for(self._read_run(time.monotonic()), PAGE_TIMEOUT)
        if run.error:
            raise RuntimeError(f"reader {self.number}: the chat page failed: {run.error}")
        if not self.chat_input_id:
            raise RuntimeError(f"reader {self.number}: no chat input on the page")

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def ask(self, question: str, timeout: float) -> Result:
        result = Result(self.number, question)
        sent = time.monotonic()
        try:
            await self._send_rerun(question)
            run = await asyncio.wait_for(self._read_run(sent), timeout)
        except TimeoutError:
            result.error = f"no answer within {timeout:g} s"
            return result
        except Exception as exc:  # a dropped connection, a protocol error
            result.error = f"{type(exc).__name__}: {exc}"
            return result
        result.first_word, result.warnings = run.first_word, run.warnings
        if run.error:
            result.error = run.error
        elif run.first_word is None:
            result.error = "the run finished without an answer"
        else:
            result.done = run.finished
        return result

    async def _send_rerun(self, question: str | None = None) -> None:
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = ""
        state.page_script_hash = self.page_hash
        if question is not None:
            widget = state.widget_states.widgets.add()
            widget.id = self.chat_input_id
            widget.chat_input_value.data = question
        assert self.ws is not None
        await self.ws.send(msg.SerializeToString())

    async def _read_run(self, sent: float) -> _Run:
        """ForwardMsgs until the script run ends: the chat input's id, the assistant's first words, errors."""
        assert self.ws is not None
        run = _Run()
        blocks: list[tuple[int, ...]] = []  # the assistant chat messages drawn in this run, in order
        while True:
            data = await self.ws.recv()
            msg = ForwardMsg()
            msg.ParseFromString(data if isinstance(data, bytes) else data.encode())
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = msg.new_session.page_script_hash or self.page_hash
            elif kind == "navigation":
                self.page_hash = msg.navigation.page_script_hash or self.page_hash
            elif kind == "delta":
                self._delta(msg, run, blocks, sent)
            elif kind == "script_finished":
                if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # our own rerun replaced the previous run
                run.finished = time.monotonic() - sent
                if msg.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    run.error = run.error or "the page did not compile"
                return run

    def _delta(self, msg: ForwardMsg, run: _Run, blocks: list[tuple[int, ...]], sent: float) -> None:
        path = tuple(msg.metadata.delta_path)
        delta = msg.delta
        if delta.WhichOneof("type") == "add_block":
            block = delta.add_block
            if block.WhichOneof("type") == "chat_message" and block.chat_message.name == "assistant":
                blocks.append(path)
            return
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind == "chat_input":
            self.chat_input_id = element.chat_input.id
        elif kind == "exception":
            run.error = run.error or f"exception: {element.exception.message[:200]}"
        elif kind == "alert" and element.alert.format == Alert.ERROR:
            run.error = run.error or f"error shown: {element.alert.body[:200]}"
        elif kind == "alert" and element.alert.format == Alert.WARNING:
            run.warnings.append(element.alert.body[:200])
        elif (
            kind == "markdown"
            and element.markdown.element_type == Markdown.NATIVE
            and element.markdown.body.strip()
            and blocks
            and path[: len(blocks[-1])] == blocks[-1]
            and run.first_word is None
        ):
            run.first_word = time.monotonic() - sent  # the answer's first text in the reader's chat


@dataclass
class _Run:
    first_word: float | None = None
    finished: float | None = None
    error: str = ""
    warnings: list[str] = field(default_factory=list)


# Rounds ---------------------------------------------------------------------------------------------------


def demo_questions() -> list[str]:
    return [
        json.loads(line)["text"]
        for name in QUESTION_FILES
        for line in (EVAL / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


async def one_round(url: str, questions: list[str], timeout: float) -> tuple[list[Result], float]:
    """One session per question, opened first (not timed), then every one asks at the same moment.
    Results in the questions' order."""
    sessions = [Reader(url, i) for i in range(len(questions))]
    await asyncio.gather(*(s.open() for s in sessions))
    started = time.monotonic()
    try:
        results = await asyncio.gather(*(s.ask(q, timeout) for s, q in zip(sessions, questions, strict=True)))
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
    return list(results), time.monotonic() - started


def api_ask(url: str, reader: int, question: str, timeout: float) -> Result:
    """One question to POST /api/ask as server-sent events: time to the first `delta` event (the first
    text of the answer) and to `done`."""
    import requests

    result = Result(reader, question)
    started = time.monotonic()
    try:
        with requests.post(
            f"{url}/api/ask", json={"question": question}, headers={"Accept": "text/event-stream"},
            stream=True, timeout=timeout,
        ) as response:  # fmt: skip
            if response.status_code != 200:
                result.error = f"HTTP {response.status_code}: {response.text[:200]}"
                return result
            for line in response.iter_lines(decode_unicode=True):
                if line == "event: delta" and result.first_word is None:
                    result.first_word = time.monotonic() - started
                elif line == "event: done":
                    result.done = time.monotonic() - started
                elif line == "event: error":
                    result.error = "error event"
    except requests.RequestException as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    if result.done is None and not result.error:
        result.error = "no answer"
    return result


def api_round(url: str, questions: list[str], timeout: float) -> tuple[list[Result], float]:
    """Every question to the API at the same moment, one client thread each."""
    from concurrent.futures import ThreadPoolExecutor

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(questions)) as pool:
        results = list(pool.map(lambda iq: api_ask(url, iq[0], iq[1], timeout), enumerate(questions)))
    return results, time.monotonic() - started


def describe_long(result: Result) -> str:
    """What became of the 20,000-character question: refused (and how fast), answered, or failed."""
    if result.warnings and result.first_word is None:
        return f"refused: {result.warnings[0][:120]}"
    if result.error:
        return f"failed: {result.error[:120]}"
    return f"answered: first word after {result.first_word:.1f} s, whole answer {result.done:.1f} s"


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)  # linear interpolation, as numpy's default
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(mode: str, readers: int, results: list[Result], wall: float) -> dict:
    firsts = [r.first_word for r in results if r.first_word is not None and not r.error]
    answered = [r for r in results if r.done is not None and not r.error]
    return {
        "mode": mode,
        "readers": readers,
        "ttfw_p50_s": percentile(firsts, 50),
        "ttfw_p95_s": percentile(firsts, 95),
        "ttfw_max_s": max(firsts) if firsts else None,
        "answer_p50_s": statistics.median([r.done for r in answered]) if answered else None,
        "answers_per_min": 60.0 * len(answered) / wall if wall > 0 else 0.0,
        "answered": len(answered),
        "errors": sum(1 for r in results if r.error),
        "wall_s": wall,
        "error_examples": sorted({r.error for r in results if r.error})[:3],
        "warnings": sum(len(r.warnings) for r in results),
    }


def print_table(rows: list[dict]) -> None:
    def s(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    base = {row["mode"]: row for row in rows if row["readers"] == 1}
    columns = [
        "answers", "readers", "first word p50 (s)", "p95 (s)", "max (s)", "p95 ÷ 1 reader",
        "whole answer p50 (s)", "answers/min", "errors",
    ]  # fmt: skip
    print("| " + " | ".join(columns) + " |")
    print("| --- " * len(columns) + "|")
    for row in rows:
        alone = base.get(row["mode"])
        ratio = (
            f"{row['ttfw_p95_s'] / alone['ttfw_p95_s']:.1f}×"
            if alone and alone["ttfw_p95_s"] and row["ttfw_p95_s"] is not None
            else "-"
        )
        print(
            f"| {row['mode']} | {row['readers']} | {s(row['ttfw_p50_s'])} | {s(row['ttfw_p95_s'])} | "
            f"{s(row['ttfw_max_s'])} | {ratio} | {s(row['answer_p50_s'])} | {row['answers_per_min']:.1f} | "
            f"{row['errors']} |"
        )
    for row in rows:
        if "long_question" in row:
            print(
                f"\n{row['mode']}, {row['readers']} readers + one 20,000-character question: {row['long_question']}"
            )
        for example in row["error_examples"]:
            print(f"  {row['mode']}, {row['readers']} readers: {example}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readers", default="1,8,32", help="Reader counts, comma-separated (1,8,32).")
    parser.add_argument("--answer-mode", choices=ANSWER_MODES, action="append", help="Repeatable.")
    parser.add_argument("--url", help="An app that is already running (its own data and settings).")
    parser.add_argument(
        "--data-dir", type=Path, help="A data dir with posts (default: the demo blog, fresh)."
    )
    parser.add_argument("--timeout", type=float, default=900.0, help="Seconds for one answer (900).")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the app (repeatable).")
    parser.add_argument("--json", type=Path, help="Also write the rows to this JSON file.")
    parser.add_argument(
        "--settle",
        type=float,
        default=30.0,
        help="Seconds to wait after the warm-up question (30): the app embeds the posts' sentences for "
        "quoted answers in the background after its first chat run.",
    )
    parser.add_argument(
        "--long-question", action="store_true", help="Plus one reader pasting 20,000 characters each round."
    )
    parser.add_argument("--no-api", action="store_true", help="Only the chat, not the HTTP API.")
    args = parser.parse_args()
    counts = [int(n) for n in args.readers.split(",") if n.strip()]
    modes = args.answer_mode or ["generative"]
    env = dict(item.split("=", 1) for item in args.env)
    pool = demo_questions()
    if sum(counts) > len(pool):
        print(f"note: {sum(counts)} questions asked, {len(pool)} distinct: some repeat", file=sys.stderr)
    fields = {f.name for f in dataclasses.fields(Settings)}
    if modes != ["generative"] and "answer_mode" not in fields:
        raise SystemExit(
            "--answer-mode: this app has no answer_mode setting yet (today's chat writes every answer with "
            "the model, i.e. generative)"
        )

    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="inkwell-load-") as tmp:
        work = Path(tmp)
        data_dir = args.data_dir
        if args.url is None and data_dir is None:
            data_dir = work / "db"
            print("Ingesting the demo blog…", file=sys.stderr)
            ingest_demo(data_dir)
        for mode in modes:
            mode_env = {**env, **({"INKWELL_ANSWER_MODE": mode} if "answer_mode" in fields else {})}
            with contextlib.ExitStack() as stack:
                if args.url:
                    url = args.url
                else:
                    (work / mode).mkdir()
                    url = stack.enter_context(running_app(data_dir, work / mode, mode_env))
                print(f"[{mode}] warming up (embedder, built-in model)…", file=sys.stderr)
                warm, _ = asyncio.run(one_round(url, [WARM_UP], args.timeout))
                if warm[0].error:
                    raise SystemExit(f"the warm-up question failed: {warm[0].error}")
                time.sleep(args.settle)  # the background warm-up (pages/shared/serving.warm_answers)
                asked = 0
                for readers in counts:
                    print(f"[{mode}] {readers} readers at once…", file=sys.stderr)
                    questions = [pool[(asked + i) % len(pool)] for i in range(readers)]
                    asked += readers
                    extra = [LONG_QUESTION] if args.long_question else []
                    results, wall = asyncio.run(one_round(url, questions + extra, args.timeout))
                    rows.append(summary(mode, readers, results[:readers], wall))
                    if extra:
                        rows[-1]["long_question"] = describe_long(results[-1])
                    print(json.dumps(rows[-1]), file=sys.stderr)
                if args.no_api:
                    continue
                for readers in counts:  # the same app, now through the HTTP API
                    print(f"[api {mode}] {readers} clients at once…", file=sys.stderr)
                    questions = [pool[(asked + i) % len(pool)] for i in range(readers)]
                    asked += readers
                    results, wall = api_round(url, questions, args.timeout)
                    rows.append(summary(f"api {mode}", readers, results, wall))
                    print(json.dumps(rows[-1]), file=sys.stderr)
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
