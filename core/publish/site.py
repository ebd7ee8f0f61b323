"""`inkwell export --static DIR`: a folder any static host serves, whose page answers readers alone.

    report = export_static(settings, "site/")

    site/index.html, inkwell-static.mjs, inkwell-core.mjs, inkwell-static.css   the page, its fixed words
                                             in the blog's language (core/text/labels.py)
    site/widget.js, data/welcome.json        the blog's widget (core/serve/widget.js) in static mode, and
                                             the owner's title, greeting and starters it shows
    site/data/index.json, vectors.i8, scales.f32                                 core/publish/bundle.py
    site/model/question.onnx, tokenizer.json                                     core/publish/model.py
    site/vendor/ort.wasm.min.mjs, ort-wasm-simd-threaded.{mjs,wasm}, porter2.mjs, licenses

The vendor files come from the npm packages pinned in static/package-lock.json, installed by `make static`
(`npm ci`) into static/node_modules (or INKWELL_STATIC_RUNTIME): the page loads nothing from elsewhere.
Only tables embedded with the bundled MiniLM can be exported: its ONNX export is what the page runs.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.answer.owner import OwnerSettings, apply_owner, load_owner
from core.config import Settings
from core.embed import embedder_for_store
from core.publish.bundle import FTS_STOP_WORDS, build_index, read_corpus
from core.publish.model import MAX_TOKENS, question_model, weights_dir
from core.search import bar_for_table
from core.store import Store
from core.text import plural
from core.text.labels import ENGLISH, label_language, labels

SUPPORTED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
ASSETS = Path(__file__).parent / "assets"
PAGE_FILES = ("index.html", "inkwell-static.mjs", "inkwell-core.mjs", "inkwell-static.css")
# The server's widget, copied at export time (one file for both modes: data-static switches it).
WIDGET = Path(__file__).resolve().parents[1] / "serve" / "widget.js"
EXAMPLE_FOLDER = "/ask/"
RUNTIME_DIR = Path(__file__).resolve().parents[2] / "static" / "node_modules"
ORT_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")


class StaticExportError(ValueError):
    """The static site cannot be written; the message says why and what to do."""


@dataclass
class StaticReport:
    path: Path
    chunks: int
    sentences: int
    headings: int
    sizes: dict[str, int] = field(default_factory=dict)  # bytes per written file (relative path)
    seconds: float = 0.0
    title: str = ""  # the widget's (the owner's chat title)

    @property
    def widget_tag(self) -> str:
        """The tag for a blog that serves this folder at /ask/ (the author changes the path to theirs)."""
        return widget_tag(EXAMPLE_FOLDER, self.title)

    @property
    def total_bytes(self) -> int:
        return sum(self.sizes.values())

    @property
    def vector_bytes_per_1000_chunks(self) -> int:
        """The vectors' bytes (chunks, their quotable sentences and headings) per 1,000 chunks."""
        size = self.sizes.get("data/vectors.i8", 0) + self.sizes.get("data/scales.f32", 0)
        return round(size * 1000 / max(self.chunks, 1))

    @property
    def data_bytes_per_1000_chunks(self) -> int:
        """Everything under data/ (text, keyword statistics, word tables, vectors) per 1,000 chunks."""
        size = sum(v for k, v in self.sizes.items() if k.startswith("data/"))
        return round(size * 1000 / max(self.chunks, 1))

    def to_json(self) -> dict:
        return {
            "path": str(self.path),
            "chunks": self.chunks,
            "sentences": self.sentences,
            "headings": self.headings,
            "total_bytes": self.total_bytes,
            "vector_bytes_per_1000_chunks": self.vector_bytes_per_1000_chunks,
            "data_bytes_per_1000_chunks": self.data_bytes_per_1000_chunks,
            "sizes": self.sizes,
            "seconds": round(self.seconds, 2),
            "widget_tag": self.widget_tag,
        }

    def summary(self) -> str:
        mb = self.total_bytes / 1e6
        return (
            f"wrote a static site of {plural(self.chunks, 'chunk')} to {self.path} ({mb:.1f} MB; vectors "
            f"{self.vector_bytes_per_1000_chunks / 1e6:.2f} MB per 1,000 chunks) in {self.seconds:.0f} s\n"
            f"On your blog, with this folder served at {EXAMPLE_FOLDER}: {self.widget_tag}"
        )


def runtime_dir() -> Path:
    return Path(os.environ.get("INKWELL_STATIC_RUNTIME") or RUNTIME_DIR)


def model_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "inkwell" / "onnx"


def check_model(model_id: str) -> None:
    """Refuse a table the page cannot embed questions for, naming what is supported."""
    if model_id != SUPPORTED_MODEL:
        raise StaticExportError(
            f"the static site supports tables embedded with {SUPPORTED_MODEL} only; this one uses "
            f"{model_id} (re-embed a copy with `inkwell reembed --embed-model all-MiniLM-L6-v2`, or serve "
            "the app for questions in other languages)"
        )


def runtime_files() -> dict[str, Path]:
    """site-relative path → source file of the npm packages the page runs."""
    root = runtime_dir()
    ort = root / "onnxruntime-web"
    stemmer = root / "wink-porter2-stemmer"
    files = {f"vendor/{name}": ort / "dist" / name for name in ORT_FILES}
    files |= {
        "vendor/onnxruntime-web.package.json": ort / "package.json",
        "vendor/wink-porter2-stemmer.LICENSE": stemmer / "LICENSE",
        "vendor/wink-porter2-stemmer.package.json": stemmer / "package.json",
        "vendor/porter2.cjs": stemmer / "src" / "wink-porter2-stemmer.js",
    }
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise StaticExportError(
            f"the browser runtime is not installed ({missing[0]} is missing): run `make static` "
            "(npm ci in static/), or point INKWELL_STATIC_RUNTIME at a node_modules folder holding "
            "onnxruntime-web and wink-porter2-stemmer"
        )
    return files


def export_static(settings: Settings, path: str | Path) -> StaticReport:
    """Write the static site for the stored posts into `path` (created; files there are replaced)."""
    started = time.perf_counter()
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise StaticExportError(f"{out} is a file, not a folder")
    store = Store(settings.data_dir)
    model_id = store.model_id()
    if model_id is None:
        raise StaticExportError("nothing to export: the table holds no chunks (ingest posts first)")
    check_model(model_id)
    vendor = runtime_files()  # before the slow parts: a missing runtime fails at once
    corpus = read_corpus(store)
    owner = load_owner(store)
    settings = apply_owner(settings, owner)  # the decline text saved on the Settings page, as the server's
    embedder = embedder_for_store(settings, model_id)
    index, blobs = build_index(corpus, embedder, settings, bar_for_table(store, embedder))
    index["fts_stop_words"] = sorted(FTS_STOP_WORDS)
    index["max_tokens"] = MAX_TOKENS
    model = question_model(model_cache())

    for sub in ("data", "model", "vendor"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    language = label_language(None, index["language"])
    for name in PAGE_FILES:
        if name == "index.html":
            page = page_html((ASSETS / name).read_text(encoding="utf-8"), language)
            written[name] = _write(out / name, page.encode())
        else:
            written[name] = _copy(ASSETS / name, out / name)
    written["widget.js"] = _copy(WIDGET, out / "widget.js")
    title = owner.title(settings)
    written["data/welcome.json"] = _write(out / "data" / "welcome.json", welcome(title, owner, language))
    for name, data in blobs.items():
        written[f"data/{name}"] = _write(out / "data" / name, data)
    written["data/index.json"] = _write(
        out / "data" / "index.json", json.dumps(index, ensure_ascii=False, separators=(",", ":")).encode()
    )
    written["model/question.onnx"] = _copy(model, out / "model" / "question.onnx")
    written["model/tokenizer.json"] = _copy(
        weights_dir() / "tokenizer.json", out / "model" / "tokenizer.json"
    )
    for name, source in vendor.items():
        if name == "vendor/porter2.cjs":  # CommonJS: wrapped as the ES module the page imports
            wrapped = f"const module = {{ exports: {{}} }};\n{source.read_text(encoding='utf-8')}\nexport default module.exports;\n"
            written["vendor/porter2.mjs"] = _write(out / "vendor" / "porter2.mjs", wrapped.encode())
        else:
            written[name] = _copy(source, out / name)
    counts = index["counts"]
    return StaticReport(
        out,
        counts["chunks"],
        counts["sentences"],
        counts["headings"],
        {name: p.stat().st_size for name, p in written.items()},
        time.perf_counter() - started,
        title,
    )


def welcome(title: str, owner: OwnerSettings, language: str = "en") -> bytes:
    """What the widget shows before the first question, as GET /api/welcome gives it (core/serve/api.py)
    without the question log's part (a static site keeps nothing): the labels in `language`, the blog's."""
    data = {
        "title": title,
        "greeting": owner.greeting,
        "starters": list(owner.starters),
        "language": language,
        "labels": labels(language),
    }
    return json.dumps(data, ensure_ascii=False).encode()


# index.html's fixed words, each as the template writes it in English, by its label.
PAGE_LABELS = ("page_title", "static_note", "placeholder", "question", "ask", "loading", "new_conversation")


def page_html(template: str, language: str) -> str:
    """index.html with its fixed words (and `lang`) in `language`; English's page as it is. Each word is
    replaced where the template has it whole, as an element's text or an attribute's value."""
    if language == "en":
        return template
    words = labels(language)
    page = template.replace('<html lang="en">', f'<html lang="{language}">', 1)
    for key in PAGE_LABELS:
        english = ENGLISH[key]
        page = page.replace(f">{english}<", f">{html.escape(words[key], quote=False)}<")
        page = page.replace(f'"{english}"', f'"{html.escape(words[key], quote=True)}"')
    return page


def widget_tag(folder: str, title: str) -> str:
    """The tag that puts the static widget on a blog whose site serves the export at `folder` (e.g.
    "/ask/"); attribute-escaped like the server's (core/serve/share.py)."""
    src = html.escape(f"{folder.rstrip('/')}/widget.js", quote=True)
    return f'<script src="{src}" defer data-static data-title="{html.escape(title, quote=True)}"></script>'


def _write(target: Path, data: bytes) -> Path:
    partial = target.with_name(target.name + ".part")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def _copy(source: Path, target: Path) -> Path:
    partial = target.with_name(target.name + ".part")
    shutil.copyfile(source, partial)
    partial.replace(target)
    return target
