"""Issue 26, items 1–6: bounded parsing, text safety, one reading of a line and of a number, and
sums that cannot overflow, as hostile cases of the corpus (``corpus.build`` adds them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tests.hostile.corpus import BAD, CONTRACT, ROOT, T0_NS, VALID, Case, otlp_doc, otlp_span

TPS_CONTRACT = ROOT / "contracts" / "provisioned-throughput-tps.yaml"
BIDI = "\u202e\u2066\u200f\u061c"
#: every case here runs in ``make test``: each takes a second or two
FAST_26 = frozenset(
    {
        "alias_bomb_validate",
        "alias_bomb_lint",
        "alias_bomb_check",
        "alias_bomb_draft",
        "alias_bomb_report",
        "alias_bomb_fields",
        "alias_bomb_mapping",
        "million_deep_jsonl_python",
        "million_deep_jsonl_engine",
        "bidi_in_term_ids_terminal",
        "bidi_in_trace_names_inspect",
        "line_separators_in_strings_python",
        "line_separators_in_strings_engine",
        "bare_cr_in_a_string_python",
        "bare_cr_in_a_string_engine",
        "token_counts_at_int64_max",
    }
)


def alias_bomb(levels: int = 9) -> str:
    """Nine nested anchors of nine aliases each: 9⁹ nodes once expanded."""
    lines = ["a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]"]
    prev = "a"
    for name in "bcdefghijklmnop"[: levels - 1]:
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
        prev = name
    return "\n".join(lines) + "\n"


def _line(spans: list[dict[str, Any]]) -> str:
    return json.dumps(otlp_doc(spans), ensure_ascii=False)


def build(d: Path) -> list[Case]:
    cases: list[Case] = []
    good = d / "good.json"
    contract = d / "contract.yaml"

    def add(name: str, argv: list[str], exits: frozenset[int] = BAD, **kw: Any) -> None:
        cases.append(Case(name, 26, tuple(argv), exits, **kw))

    # -- 1: bounded parsing ------------------------------------------------------------------
    bomb = d / "bomb.yaml"
    bomb.write_text(alias_bomb(), encoding="utf-8")
    says = ("bomb.yaml:5:", "aliases")
    for command, argv in {
        "validate": ["validate", str(bomb)],
        "lint": ["lint", str(bomb)],
        "check": ["check", str(bomb), str(good)],
        "draft": ["draft", str(bomb), "-o", str(d / "bomb.md")],
        "report": ["report", str(bomb), str(good), "-o", str(d / "r.md"), "--period", "2026-07"],
        "fields": ["fields", str(bomb), str(good)],
    }.items():
        add(f"alias_bomb_{command}", argv, says=says, timeout=60)
    add(
        "alias_bomb_mapping",
        ["traces", "inspect", str(good), "--mapping", str(bomb)],
        says=says,
        timeout=20,
    )
    deep = d / "deep.jsonl"
    n = 1_000_000
    deep.write_text(
        _line([otlp_span(0)]) + "\n" + '{"resourceSpans": [], "x": ' + "[" * n + "]" * n + "}\n"
    )
    for reader, env in (("python", {}), ("engine", {"SLACHECK_OTLP_ENGINE_BYTES": "0"})):
        add(
            f"million_deep_jsonl_{reader}",
            ["traces", "inspect", str(deep)],
            says=("deep.jsonl:2", "nested more than 128"),
            env=env,
            timeout=30,
        )

    # -- 2: one text-safety rule ---------------------------------------------------------------
    text = contract.read_text(encoding="utf-8")
    spoof = d / "bidi_ids.yaml"
    spoof.write_text(text.replace("id: L1-task-p95", f'id: "L1{BIDI}gnp.exe"', 1))
    add(
        "bidi_in_term_ids_terminal",
        ["check", str(spoof), str(good)],
        VALID,
        forbidden=(*BIDI, "Traceback"),
    )
    named = d / "bidi_names.json"
    span = otlp_span(0)
    span["attributes"][1] = {"key": "gen_ai.request.model", "value": {"stringValue": BIDI}}
    named.write_text(json.dumps(otlp_doc([span, otlp_span(1)]), ensure_ascii=False))
    add(
        "bidi_in_trace_names_inspect",
        ["traces", "inspect", str(named)],
        VALID,
        forbidden=(*BIDI, "Traceback"),
    )

    # -- 3: one reading of a line --------------------------------------------------------------
    seps = d / "separators.jsonl"
    lines = [
        _line([otlp_span(0, name="a\u2028b"), otlp_span(1, name="c\u0085d")]),
        _line([otlp_span(2, name="e\u2029f\x1cg")]),
    ]
    seps.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for reader, env in (("python", {}), ("engine", {"SLACHECK_OTLP_ENGINE_BYTES": "0"})):
        add(
            f"line_separators_in_strings_{reader}",
            ["traces", "inspect", str(seps)],
            VALID,
            env=env,
        )
    cr = d / "cr.jsonl"
    raw_cr = _line([otlp_span(1, name="x\ry")]).replace("\\r", "\r")  # a CR as it is, not \r
    cr.write_bytes((_line([otlp_span(0)]) + "\n" + raw_cr + "\n").encode())
    # JSON allows no raw control character in a string: both readers refuse the line alike
    for reader, env in (("python", {"SLACHECK_OTLP_ENGINE_BYTES": "-1"}), ("engine", {})):
        add(
            f"bare_cr_in_a_string_{reader}",
            ["traces", "inspect", str(cr)],
            says=("cr.jsonl:2:", "control character"),
            env={"SLACHECK_OTLP_ENGINE_BYTES": "0", **env},
        )

    # -- 5: sums that cannot overflow ---------------------------------------------------------
    tokens = d / "tokens_int64_max.parquet"
    _token_parquet(tokens, 50, 2**63 - 1)
    add("token_counts_at_int64_max", ["check", str(TPS_CONTRACT), str(tokens)], VALID)
    return cases


def _token_parquet(path: Path, n: int, tokens: int) -> None:
    from slacheck.trace.schema import ARROW_SCHEMA, conform

    t0 = T0_NS // 1000
    table = pa.table(
        {
            "task_id": [f"t{i}" for i in range(n)],
            "span_id": [f"s{i}" for i in range(n)],
            "kind": ["llm"] * n,
            "start_us": pa.array([t0 + i * 1000 for i in range(n)], pa.int64()),
            "end_us": pa.array([t0 + i * 1000 + 900_000 for i in range(n)], pa.int64()),
            "input_tokens": pa.array([tokens] * n, pa.int64()),
            "output_tokens": pa.array([tokens] * n, pa.int64()),
            "ttft_ms": [100.0] * n,
            "request_model": ["gpt-4o"] * n,
            "provider": ["azure.ai.openai"] * n,
            "endpoint": ["example-logistics.openai.example.com"] * n,
        }
    )
    pq.write_table(conform(table).cast(ARROW_SCHEMA), path)


__all__ = ["CONTRACT", "FAST_26", "alias_bomb", "build"]
