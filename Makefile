# The README's commands. Each target sets up what it needs on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-all test-deps conformance lint bench bench-large bench-otlp bench-json golden docs messages sysdeps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,all]'
	touch $(STAMP)

# System packages: a JDK for PySpark, poppler for pdftotext/pdffonts, a CJK font for Chinese PDFs.
sysdeps:
	@bash scripts/sysdeps.sh

demo: $(STAMP) sysdeps
	$(BIN)/slacheck demo -o demo-out

test: $(STAMP) sysdeps
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder -m "not slow" $(PYTEST_ARGS)

test-all: $(STAMP) sysdeps
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# The dependency ranges pyproject.toml declares, at both ends: fresh virtualenvs (under
# .venv-deps/) with the lowest direct versions allowed and with the newest, each running a smoke
# suite (scripts/test_deps.sh says what). Needs no $(STAMP): it builds its own venvs.
test-deps: sysdeps
	bash scripts/test_deps.sh

# Re-record the conformance corpus (tests/data/conformance/): every producer installed at its
# pinned version in its own environment under conformance/.venvs/ (PyPI, npm), run against the
# local replay server; `make conformance PRODUCERS="langfuse litellm"` for some.
conformance: $(STAMP)
	$(PYTHON) conformance/run.py $(PRODUCERS)

lint: $(STAMP)
	$(BIN)/ruff check slacheck tests bench
	$(BIN)/ruff format --check slacheck tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python -m bench

# About 1 million spans of OTLP JSON lines in 8 files, read by the engine on DuckDB and on Spark;
# the verdicts must be identical.
bench-otlp: $(STAMP) sysdeps
	$(BIN)/python -m bench.otlp

# About 500,000 spans as a Langfuse export, an OTLP JSON document and a LangSmith run list, each
# read by slacheck's Python reader beside json.load + pyarrow and DuckDB's read_json doing the
# same flattening: CPU, wall and peak memory (bench/json_docs.py).
bench-json: $(STAMP)
	$(BIN)/python -m bench.json_docs

# About 100 million spans, generated in 40 chunks to a folder of Parquet files (about 4 GiB); the
# same steps as `make bench`, the whole demo contract beside its hand SQL included (the hand SQL
# given 1.5 GB).
bench-large: $(STAMP)
	SLACHECK_BENCH_TASKS=4400000 SLACHECK_BENCH_CHUNKS=40 SLACHECK_BENCH_SQL_MEMORY=1500MB \
		$(BIN)/python -m bench

docs: $(STAMP)
	$(BIN)/python scripts/docs.py
	$(BIN)/slacheck schema -o slacheck/contract/contract.schema.json
	$(BIN)/python -c 'from pathlib import Path; from slacheck.trace.conventions import write_twin; write_twin(Path("slacheck/trace"))'

# Message catalogues: extract every NC_("code", "template") and NPC_("code", "singular",
# "plural", count=...) into the .pot, merge into each .po
# (new codes arrive with an empty msgstr; the test suite fails until they are translated).
LOCALE := slacheck/locale
messages: $(STAMP)
	$(BIN)/pybabel extract -F babel.cfg --no-default-keywords -k NC_:1c,2 -k NPC_:1c,2,3 -k _ -k gettext \
		-k ngettext:1,2 -k pgettext:1c,2 -k npgettext:1c,2,3 \
		--sort-by-file --no-wrap --project slacheck --copyright-holder "slacheck authors" \
		-o $(LOCALE)/slacheck.pot .
	$(BIN)/pybabel update -i $(LOCALE)/slacheck.pot -d $(LOCALE) -D slacheck -l zh_CN \
		--no-wrap --ignore-obsolete --init-missing --no-fuzzy-matching

golden: $(STAMP)
	SLACHECK_REGEN_GOLDEN=1 $(BIN)/python -m pytest -q tests -k golden

clean:
	rm -rf $(VENV) .venv-deps demo-out .pytest_cache .mypy_cache .ruff_cache
