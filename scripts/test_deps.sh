#!/usr/bin/env bash
# make test-deps: the dependency ranges pyproject.toml declares, tested at both ends.
#
# For each end (lowest, newest) a fresh virtualenv gets slacheck installed from a wheel built
# here, with its runtime dependencies and the engine, pdf and charts extras (Spark is left to
# the suite's Spark tests) resolved by uv: `lowest` takes the lowest version of every
# direct dependency that pyproject.toml allows (uv's --resolution lowest-direct; what those pull
# in is resolved as pip would), `newest` the newest. Then the smoke suite runs from a folder
# outside the repository, so the installed wheel is what answers:
#   - `--version`, `--help` and every command's `--help` (exit 0, no traceback)
#   - validate a bad contract → exit 2 with the problem located; a good one → exit 0
#   - generate traffic, check the demo contract → the demo's verdicts (exit 1: a term breached),
#     and the same verdicts at both ends
#   - draft, accept and report in PDF, HTML and Markdown, draft and accept in Word (.docx),
#     English and Chinese
#   - the test modules that pin the CLI's exit codes, the terminal's output and help text, and
#     the documents' golden text and PDF fonts
#
# Usage: scripts/test_deps.sh [lowest|newest|both]   (default both)
# TEST_DEPS_DIR: where the virtualenvs go (default .venv-deps/); PYTHON: the interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ENDS=${1:-both}
[ "$ENDS" = both ] && ENDS="lowest newest"
DIR=${TEST_DEPS_DIR:-$ROOT/.venv-deps}
PYTHON=${PYTHON:-python3}
mkdir -p "$DIR"

# uv: the one on PATH, else one installed from PyPI into a tools venv
if command -v uv >/dev/null 2>&1; then
  UV=$(command -v uv)
else
  if [ ! -x "$DIR/tools/bin/uv" ]; then
    "$PYTHON" -m venv "$DIR/tools"
    "$DIR/tools/bin/pip" install --quiet uv
  fi
  UV=$DIR/tools/bin/uv
fi

# the wheel a user installs (built once for both ends)
WHEEL_DIR=$DIR/wheel
rm -rf "$WHEEL_DIR"
"$UV" build --quiet --wheel --out-dir "$WHEEL_DIR" "$ROOT" >/dev/null
WHEEL=$(ls "$WHEEL_DIR"/slacheck-*.whl)

fail() { echo "test-deps[$END]: FAIL: $*" >&2; exit 1; }

# expect CODE CMD...: run CMD, require exit CODE and no traceback on stderr
expect() {
  local want=$1 rc=0
  shift
  "$@" >"$WORK/out.txt" 2>"$WORK/err.txt" || rc=$?
  # a warning on stderr (pydantic 2.7 warns about a field on every command) is a failure too
  if [ "$rc" -ne "$want" ] || grep -qE "Traceback|Warning:" "$WORK/err.txt"; then
    echo "--- stdout" >&2; head -c 3000 "$WORK/out.txt" >&2
    echo "--- stderr" >&2; head -c 3000 "$WORK/err.txt" >&2
    fail "exit $rc (want $want): $*"
  fi
}

for END in $ENDS; do
  case $END in
    lowest) RESOLUTION=lowest-direct ;;
    newest) RESOLUTION=highest ;;
    *) echo "usage: $0 [lowest|newest|both]" >&2; exit 2 ;;
  esac
  VENV=$DIR/$END
  echo "test-deps[$END]: resolving ($RESOLUTION) and installing into $VENV"
  rm -rf "$VENV"
  "$UV" venv --quiet --python "$PYTHON" "$VENV"
  "$UV" pip compile --quiet --no-header --resolution "$RESOLUTION" --python "$VENV/bin/python" \
    --extra engine --extra pdf --extra charts "$ROOT/pyproject.toml" -o "$DIR/$END.txt"
  "$UV" pip install --quiet --python "$VENV/bin/python" -r "$DIR/$END.txt"
  "$UV" pip install --quiet --python "$VENV/bin/python" --no-deps "$WHEEL"
  # the test runner itself is not under test: its newest release
  "$UV" pip install --quiet --python "$VENV/bin/python" pytest hypothesis
  grep -E '^(typer|click|rich|pydantic|ruamel-yaml|ibis-framework|sqlglot|duckdb|pandas|pyarrow|numpy|jinja2|weasyprint|matplotlib|babel)==' \
    "$DIR/$END.txt" | tr '\n' ' ' | sed "s/^/test-deps[$END]: /"
  echo

  WORK=$(mktemp -d "${TMPDIR:-/tmp}/slacheck-test-deps-XXXXXX")
  S=$VENV/bin/slacheck
  (
    cd "$WORK"
    expect 0 "$S" --version
    grep -q "^slacheck " out.txt || fail "--version printed $(cat out.txt)"
    expect 0 "$S" --help
    for cmd in validate schema init lint doctor generate fields check budget draft accept report \
      claim demo "export openslo" "traces inspect" "traces convert" "traces conventions"; do
      # shellcheck disable=SC2086
      expect 0 "$S" $cmd --help
    done
    printf 'contract:\n  id: x\n  vendr: y\n' >bad.yaml
    expect 2 "$S" validate bad.yaml
    grep -q "bad.yaml:3" err.txt || fail "validate did not locate the problem: $(cat err.txt)"
    cp "$ROOT/contracts/strong-cn-task-e2e.yaml" contract.yaml
    expect 0 "$S" validate contract.yaml
    python_demo=$("$VENV/bin/python" -c \
      'from importlib import resources; print(resources.files("slacheck.contract") / "starters/demo.yaml")')
    cp "$python_demo" demo.yaml
    expect 0 "$S" generate --tasks 4000 --days 31 --seed 1 --malformed 12 -o traffic.parquet
    expect 1 "$S" check demo.yaml traffic.parquet --period 2026-07 --format json
    "$VENV/bin/python" -c '
import json, sys
doc = json.load(open("out.txt"))
for r in doc["terms"]:
    print(r["id"], r["window"], r["verdict"], r["good"], r["total"], r["observed"])
' >"$DIR/$END.verdicts"
    grep -q "^L3-server-p99 2026-07 met " "$DIR/$END.verdicts" || fail "L3-server-p99 not met"
    grep -q "^L1-task-p95 2026-07 breached " "$DIR/$END.verdicts" || fail "L1-task-p95 not breached"
    # the documents from a smaller sample: rendering is what is under test here
    expect 0 "$S" generate --tasks 300 --days 31 --seed 1 -o small.parquet
    for lang in en zh; do
      for fmt in pdf html md; do
        expect 0 "$S" draft demo.yaml -o "draft.$lang.$fmt" --lang "$lang"
        expect 0 "$S" accept demo.yaml small.parquet -o "accept.$lang.$fmt" --lang "$lang"
        expect 0 "$S" report demo.yaml small.parquet --period 2026-Q3 --issued 2026-10-05 \
          -o "report.$lang.$fmt" --lang "$lang"
      done
      # Word: the draft and the acceptance criteria (the documents counsel redlines)
      expect 0 "$S" draft demo.yaml -o "draft.$lang.docx" --lang "$lang"
      expect 0 "$S" accept demo.yaml small.parquet -o "accept.$lang.docx" --lang "$lang"
    done
    for f in ./*.docx; do
      head -c 2 "$f" | grep -q "PK" || fail "$f is not a Word document"
    done
    for f in ./*.pdf; do
      head -c 5 "$f" | grep -q "%PDF-" || fail "$f is not a PDF"
    done
    expect 0 "$S" budget small.parquet
  )
  # the suite's own pins, run with this venv's packages (and the repository's code and data)
  # At the lowest end old packages meet new ones they did not know (typer 0.16 imports what
  # click 8.5 deprecates): their deprecation warnings are not failures there, as the suite's
  # filterwarnings = error would make them; at the newest end they are.
  warnings=()
  [ "$END" = lowest ] && warnings=(-W "ignore::DeprecationWarning")
  (cd "$ROOT" && "$VENV/bin/python" -m pytest -q -p no:cacheprovider -x "${warnings[@]}" \
    tests/test_cli_exit_codes.py tests/test_terminal.py &&
    "$VENV/bin/python" -m pytest -q -p no:cacheprovider -x "${warnings[@]}" \
      tests/test_render.py -k "golden or pdf_report") || fail "pytest"
  rm -rf "$WORK"
  echo "test-deps[$END]: passed"
done

if [ -f "$DIR/lowest.verdicts" ] && [ -f "$DIR/newest.verdicts" ]; then
  diff -u "$DIR/lowest.verdicts" "$DIR/newest.verdicts" ||
    { echo "test-deps: the verdicts differ between the lowest and the newest versions" >&2; exit 1; }
  echo "test-deps: same verdicts, counts and observed figures at both ends"
fi
