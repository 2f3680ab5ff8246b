#!/usr/bin/env bash
# The GitHub Action's logic (action.yml calls this; it also runs locally):
#   slacheck check CONTRACT TRACES… [--period P] --junit OUT/junit.xml --format json
# then a verdict table (Markdown) into OUT/report.md and $GITHUB_STEP_SUMMARY.
# Inputs come from the environment, as the composite action passes them:
#   SLACHECK_CONTRACT (required), SLACHECK_TRACES (required; space-separated paths),
#   SLACHECK_PERIOD, SLACHECK_OUTPUT (default slacheck-out), SLACHECK_FAIL_ON_BREACH (true|false),
#   SLACHECK (the command; default `python -m slacheck`), PYTHON (default python3).
# Exit: slacheck's code (0 all met, 1 breached or unverifiable, 2 bad input, 3 bug); with
# SLACHECK_FAIL_ON_BREACH=false, 1 becomes 0 (the table still says what was found).
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
  --junit "$out/junit.xml" --format json >"$out/check.json"
code=$?
set -e
if [[ $code -ge 2 ]]; then
  exit "$code"
fi

"$python" - "$out/check.json" "$out/report.md" <<'PY'
import json, sys
data = json.load(open(sys.argv[1], encoding="utf-8"))
def cell(v):
    return " ".join(str(v).replace("|", "\\|").split())
lines = [
    f"### slacheck: {cell(data['contract'])}" + (f", {cell(data['period'])}" if data.get("period") else ""),
    "",
    "| term | window | verdict | observed | good / total |",
    "|---|---|---|---|---|",
]
for t in data["terms"]:
    observed = "—" if t["observed"] is None else f"{t['observed']:,.2f} {t['unit']}"
    lines.append(
        f"| {cell(t['id'])} | {cell(t['window'])} | **{t['verdict']}** | {observed} "
        f"| {t['good']:,} / {t['total']:,} |"
    )
s = data["summary"]
lines += ["", ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in s.items() if v), ""]
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(lines))
PY

if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  cat "$out/report.md" >>"$GITHUB_STEP_SUMMARY"
else
  cat "$out/report.md"
fi

if [[ $code -eq 1 && "${SLACHECK_FAIL_ON_BREACH:-true}" == "false" ]]; then
  exit 0
fi
exit "$code"
