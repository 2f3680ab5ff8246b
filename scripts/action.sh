#!/usr/bin/env bash
# The GitHub Action's logic (action.yml calls this; it also runs locally):
#   slacheck check CONTRACT TRACES… [--period P] --junit OUT/junit.xml --json OUT/check.json \
#     --format md >OUT/report.md
# and OUT/report.md — the command's own Markdown, nothing re-rendered here — into
# $GITHUB_STEP_SUMMARY (or on stdout when there is none).
# Inputs come from the environment, as the composite action passes them:
#   SLACHECK_CONTRACT (required), SLACHECK_TRACES (required; space-separated paths),
#   SLACHECK_PERIOD, SLACHECK_OUTPUT (default slacheck-out), SLACHECK_FAIL_ON_BREACH (true|false),
#   SLACHECK_LANG (en|zh, default en),
#   SLACHECK (the command; default `python -m slacheck`), PYTHON (default python3).
# Exit: slacheck's code (0 all met, 1 breached or unverifiable, 2 bad input, 3 bug); with
# SLACHECK_FAIL_ON_BREACH=false, 1 becomes 0 (the summary still says what was found).
set -euo pipefail

: "${SLACHECK_CONTRACT:?set SLACHECK_CONTRACT to the contract file}"
: "${SLACHECK_TRACES:?set SLACHECK_TRACES to the trace files}"
out="${SLACHECK_OUTPUT:-slacheck-out}"
python="${PYTHON:-python3}"
read -r -a slacheck <<<"${SLACHECK:-$python -m slacheck}"
read -r -a traces <<<"$SLACHECK_TRACES"
period=()
if [[ -n "${SLACHECK_PERIOD:-}" ]]; then period=(--period "$SLACHECK_PERIOD"); fi

mkdir -p "$out"
set +e
"${slacheck[@]}" check "$SLACHECK_CONTRACT" "${traces[@]}" "${period[@]}" \
  --lang "${SLACHECK_LANG:-en}" --junit "$out/junit.xml" --json "$out/check.json" \
  --format md >"$out/report.md"
code=$?
set -e
if [[ $code -ge 2 ]]; then
  exit "$code"
fi

if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  cat "$out/report.md" >>"$GITHUB_STEP_SUMMARY"
else
  cat "$out/report.md"
fi

if [[ $code -eq 1 && "${SLACHECK_FAIL_ON_BREACH:-true}" == "false" ]]; then
  exit 0
fi
exit "$code"
