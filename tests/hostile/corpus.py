"""The hostile corpus: every class of input from issue 14 that once gave a traceback, a false
exit code, a hang or a silent loss, written into a folder with the command that exercises it.

``build(folder)`` writes the files and returns the cases; ``python -m tests.hostile.corpus DIR``
writes them for a look by hand. Each case says which exit codes are right: 2 for bad input
(with a message naming the file), 0 or 1 where the input is valid.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "contracts" / "strong-cn-task-e2e.yaml"
T0_NS = 1_782_864_000_000_000_000  # 2026-07-01T00:00:00Z


@dataclass(frozen=True)
class Case:
    """One hostile input and the command that reads it."""

    name: str
    item: int  # the numbered class of issue 14
    argv: tuple[str, ...]
    exits: frozenset[int]
    #: text the message must contain (a file name, a line), when the exit is 2
    says: tuple[str, ...] = ()
    slow: bool = False
    #: files that must be byte-for-byte unchanged after the command (outputs that failed)
    unchanged: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    #: text that must appear nowhere in the output (raw markup, escape sequences)
    forbidden: tuple[str, ...] = ("Traceback",)
    #: python run before the CLI (e.g. to hide PySpark)
    prelude: str = ""
    #: seconds of CPU before the command counts as hung (``run``: RLIMIT_CPU in the child, so a
    #: loaded machine does not make a slow command a hang); a command that waits without using
    #: the CPU (a FIFO never opened) is hung after ``WALL_FACTOR`` times as many seconds of wall
    timeout: float = 60.0


BAD = frozenset({2})
VALID = frozenset({0, 1})


def contract_text(**changes: str) -> str:
    """The strong sample contract with lines replaced (``old=new`` by the line's start)."""
    text = CONTRACT.read_text(encoding="utf-8")
    for old, new in changes.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def otlp_span(i: int, **over: Any) -> dict[str, Any]:
    start = T0_NS + i * 60_000_000_000
    span: dict[str, Any] = {
        "traceId": f"{i + 1:032x}",
        "spanId": f"{i + 1:016x}",
        "name": "chat gpt-4o",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 900_000_000),
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
            {"key": "gen_ai.provider.name", "value": {"stringValue": "openai"}},
        ],
    }
    span.update(over)
    return span


def otlp_doc(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def _attr(span: dict[str, Any], key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {**span, "attributes": [*span["attributes"], {"key": key, "value": value}]}


def canonical_parquet(path: Path, starts: list[int], ends: list[int] | None = None) -> None:
    from slacheck.trace.schema import ARROW_SCHEMA, conform

    n = len(starts)
    table = pa.table(
        {
            "task_id": [f"t{i}" for i in range(n)],
            "span_id": [f"s{i}" for i in range(n)],
            "kind": ["llm"] * n,
            "start_us": pa.array(starts, pa.int64()),
            "end_us": pa.array(ends if ends is not None else starts, pa.int64()),
        }
    )
    pq.write_table(conform(table).cast(ARROW_SCHEMA), path)


OCCURRENCE = "objective: {kind: occurrence, percentile: 95, threshold: 30000, method: nearest_rank}"


#: One or two cases per class run in ``make test`` (well under a minute); the rest are slow.
FAST = frozenset(
    {
        "duplicate_resourceSpans_key",
        "date_feb_30",
        "maintenance_naive_vs_aware",
        "canonical_int64_limits",
        "parquet_truncated",
        "deep_yaml_contract",
        "period_9999_q4",
        "output_into_proc",
        "fifo_contract",
        "dev_zero_trace",
        "100k_unknown_keys",
        "draft_over_its_contract",
        "check_md_script_ids",
        "terminal_escapes_in_ids_and_paths",
        "non_utf8_contract",
        "utf16_json",
        "symlink_loop_trace",
    }
)


def build(d: Path) -> list[Case]:
    """Write every hostile input into ``d``; the cases that read them."""
    from tests.hostile import parse26

    cases: list[Case] = build_all(d) + parse26.build(d)
    fast = FAST | parse26.FAST_26
    return [c if c.name in fast or c.slow else _slow(c) for c in cases]


def _slow(case: Case) -> Case:
    from dataclasses import replace

    return replace(case, slow=True)


def build_all(d: Path) -> list[Case]:
    cases: list[Case] = []
    good = d / "good.json"
    good.write_text(json.dumps(otlp_doc([otlp_span(i) for i in range(5)])))
    contract = d / "contract.yaml"
    contract.write_text(CONTRACT.read_text(encoding="utf-8"))

    def add(name: str, item: int, argv: list[str], exits: frozenset[int] = BAD, **kw: Any) -> None:
        cases.append(Case(name, item, tuple(argv), exits, **kw))

    def write(name: str, data: str | bytes) -> str:
        p = d / name
        if isinstance(data, str):
            p.write_text(data, encoding="utf-8")
        else:
            p.write_bytes(data)
        return str(p)

    def contract_case(name: str, item: int, *, says: tuple[str, ...] = (), **changes: str) -> None:
        path = write(f"{name}.yaml", contract_text(**changes))
        add(name, item, ["validate", path], says=(f"{name}.yaml", *says))

    # -- 3: spans silently not read ---------------------------------------------------------
    dup = '{"resourceSpans": [{"scopeSpans": [{"spans": [%s]}]}],\n"resourceSpans": []}'
    write("dup_key.json", dup % json.dumps(otlp_span(0)))
    add(
        "duplicate_resourceSpans_key",
        3,
        ["traces", "inspect", str(d / "dup_key.json")],
        says=("dup_key.json:2", "twice"),
    )

    # -- 4: tracebacks with exit 1 ----------------------------------------------------------
    eff = "effective: {start: 2026-07-01, end: 2027-06-30}"
    contract_case("date_feb_30", 4, **{eff: "effective: {start: 2026-02-30}"})
    contract_case("date_month_13", 4, **{eff: "effective: {start: 2026-13-01}"})
    contract_case("date_year_1", 4, **{eff: "effective: {start: 0001-01-01}"})
    base = contract_text()
    no_excl = base.split("\nexclusions:")[0]

    def with_exclusions(name: str, body: str, item: int = 4) -> None:
        path = write(f"{name}.yaml", no_excl + "\nexclusions:\n" + body)
        add(name, item, ["validate", path], says=(f"{name}.yaml",))

    with_exclusions(
        "maintenance_naive_vs_aware",
        "  maintenance:\n    - {start: 2026-07-05T02:00:00, end: 2026-07-05T04:00:00+08:00}\n",
    )
    with_exclusions(
        "maintenance_year_1_to_9999",
        "  maintenance:\n    - {start: 0001-01-01T00:00:00Z, end: 9999-12-31T00:00:00Z}\n",
    )
    with_exclusions("max_input_tokens_1e30", "  max_input_tokens: 1e30\n")
    with_exclusions("max_input_tokens_huge_int", "  max_input_tokens: " + "9" * 30 + "\n")
    credits_tail = "\ncredits:\n  claim_deadline_days: 1000000000000\n  tiers:\n"
    path = write(
        "claim_deadline_1e12.yaml",
        base.replace("\ncredits:\n", "\ncredits:\n  claim_deadline_days: 1000000000000\n", 1)
        if "\ncredits:\n" in base
        else base + credits_tail + "    - {below: 99.9, percent: 10}\n",
    )
    add("claim_deadline_1e12", 4, ["validate", path], says=("claim_deadline_1e12.yaml",))
    thr = "threshold: 30000"
    contract_case("threshold_denormal", 4, **{thr: "threshold: 5e-324"})
    contract_case("threshold_1e309", 4, **{thr: "threshold: 1e309"})
    contract_case(
        "min_calls_per_slice_1e26",
        4,
        **{
            OCCURRENCE: (
                "objective: {kind: time_slice, slice_minutes: 5, threshold: 10, "
                "slices_passing_percent: 99, min_calls_per_slice: 100000000000000000000000000}"
            )
        },
    )
    # trace numbers beyond int64, floats for integers
    big = [
        otlp_span(0, startTimeUnixNano=10**21, endTimeUnixNano=10**21 + 1),
        otlp_span(1, startTimeUnixNano=10**24, endTimeUnixNano=10**24 + 5),
        otlp_span(2, startTimeUnixNano=1.7e18, endTimeUnixNano=1.7e18),
        _attr(otlp_span(3), "gen_ai.usage.input_tokens", {"intValue": str(10**30)}),
        _attr(otlp_span(4), "http.response.status_code", {"intValue": 10**25}),
        _attr(otlp_span(5), "gen_ai.usage.output_tokens", {"doubleValue": 1e300}),
        otlp_span(6),
    ]
    write("int64_overflow.json", json.dumps(otlp_doc(big)))
    add(
        "trace_numbers_beyond_int64",
        4,
        ["check", str(contract), str(d / "int64_overflow.json"), "--format", "json"],
        VALID,
    )
    canonical_parquet(
        d / "int64_limits.parquet",
        [2**63 - 1, -(2**63), 1_782_864_000_000_000],
        [2**63 - 1, 2**63 - 1, 1_782_864_001_000_000],
    )
    add(
        "canonical_int64_limits",
        4,
        ["check", str(contract), str(d / "int64_limits.parquet")],
        VALID,
    )
    year_3000 = 32_503_680_000_000_000
    canonical_parquet(
        d / "year_3000.parquet",
        [year_3000, 1_782_864_000_000_000],
        [year_3000 + 1, 1_782_864_001_000_000],
    )
    add("canonical_year_3000", 4, ["check", str(contract), str(d / "year_3000.parquet")], VALID)
    canonical_parquet(
        d / "year_1971.parquet",
        [31_536_000_000_000, 1_782_864_000_000_000],
        [31_536_000_000_001, 1_782_864_001_000_000],
    )
    add(
        "outlier_1971_recursion",
        4,
        ["check", str(contract), str(d / "year_1971.parquet")],
        VALID,
        timeout=120.0,
    )
    # corrupt Parquet
    pq_bytes = (d / "year_3000.parquet").read_bytes()
    for name, data in {
        "truncated": pq_bytes[: len(pq_bytes) // 2],
        "magic_only": b"PAR1",
        "magic_garbage": b"PAR1" + os.urandom(64) + b"PAR1",
        "garbage": os.urandom(256),
    }.items():
        write(f"corrupt_{name}.parquet", data)
        add(
            f"parquet_{name}",
            4,
            ["traces", "inspect", str(d / f"corrupt_{name}.parquet")],
            says=(f"corrupt_{name}.parquet",),
        )
    write("csv_renamed.parquet", "a,b\n1,2\n")
    add(
        "csv_renamed_parquet",
        4,
        ["traces", "inspect", str(d / "csv_renamed.parquet")],
        says=("csv_renamed.parquet",),
    )
    # deep nesting
    write("deep.yaml", "a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    add("deep_yaml_contract", 4, ["validate", str(d / "deep.yaml")], says=("deep.yaml",))
    write(
        "deep_block.yaml",
        "".join("  " * i + f"k{i}:\n" for i in range(3000)) + "  " * 3000 + "x: 1\n",
    )
    add(
        "deep_block_yaml_contract",
        4,
        ["validate", str(d / "deep_block.yaml")],
        says=("deep_block.yaml",),
    )
    write("deep.json", '{"resourceSpans": ' + "[" * 100_000 + "]" * 100_000 + "}")
    add("deep_json_trace", 4, ["traces", "inspect", str(d / "deep.json")], says=("deep.json",))
    add(
        "deep_yaml_mapping",
        4,
        ["traces", "inspect", str(good), "--mapping", str(d / "deep.yaml")],
        says=("deep.yaml",),
    )
    # a lone surrogate, rich markup and escapes in ids and names
    write("surrogate.json", json.dumps(otlp_doc([otlp_span(0, name="chat \ud800"), otlp_span(1)])))
    add("lone_surrogate_name", 4, ["traces", "inspect", str(d / "surrogate.json")], VALID)
    marked = d / "[bold]x[red].json"
    marked.write_text(json.dumps(otlp_doc([otlp_span(0, traceId="[/]" * 3), otlp_span(1)])))
    add("rich_markup_path_and_id", 4, ["traces", "inspect", str(marked)], VALID)
    add(
        "rich_markup_missing_path", 4, ["validate", str(d / "[/]nope.yaml")], says=("[/]nope.yaml",)
    )
    add(
        "period_9999_q4",
        4,
        ["check", str(contract), str(good), "--period", "9999-Q4"],
        says=("9999-Q4",),
    )
    add(
        "period_0000_01",
        4,
        ["check", str(contract), str(good), "--period", "0000-01"],
        says=("0000-01",),
    )
    add(
        "generate_start_9999",
        4,
        [
            "generate",
            "-o",
            str(d / "g.parquet"),
            "--start",
            "9999-12-30",
            "--tasks",
            "5",
            "--days",
            "5",
        ],
        says=("--start",),
    )
    (d / "outdir").mkdir()
    add(
        "output_onto_folder",
        4,
        ["draft", str(contract), "-o", str(d / "outdir"), "--format", "md"],
        says=("outdir", "folder"),
    )
    add(
        "output_into_proc",
        4,
        ["draft", str(contract), "-o", "/proc/nope/x.md"],
        says=("/proc/nope/x.md",),
    )
    add(
        "junit_into_proc",
        4,
        ["check", str(contract), str(good), "--junit", "/proc/nope/x.xml"],
        says=("x.xml",),
    )
    add(
        "spark_without_pyspark",
        4,
        ["traces", "inspect", str(good), "--engine", "spark"],
        says=("pip install 'slacheck[spark]'",),
        prelude="import sys; sys.modules['pyspark'] = None",
    )

    # -- 5: hangs and unbounded reads -------------------------------------------------------
    fifo = d / "fifo.yaml"
    os.mkfifo(fifo)
    add("fifo_contract", 5, ["validate", str(fifo)], says=("fifo.yaml", "FIFO"), timeout=20)
    add(
        "fifo_mapping",
        5,
        ["traces", "inspect", str(good), "--mapping", str(fifo)],
        says=("fifo.yaml", "FIFO"),
        timeout=20,
    )
    add("fifo_trace", 5, ["traces", "inspect", str(fifo)], says=("fifo.yaml", "FIFO"), timeout=20)
    add("dev_zero_contract", 5, ["validate", "/dev/zero"], says=("/dev/zero", "device"), timeout=20)
    add(
        "dev_zero_trace",
        5,
        ["traces", "inspect", "/dev/zero"],
        says=("/dev/zero", "device"),
        timeout=20,
    )
    write("unknown_keys.yaml", base + "".join(f"k{i}: 1\n" for i in range(100_000)))
    add(
        "100k_unknown_keys",
        5,
        ["validate", str(d / "unknown_keys.yaml")],
        says=("unknown_keys.yaml", "larger than"),
        timeout=30,
    )
    write("20k_unknown_keys.yaml", base + "".join(f"k{i}: 1\n" for i in range(20_000)))
    add(
        "20k_unknown_keys",
        5,
        ["validate", str(d / "20k_unknown_keys.yaml")],
        says=("20k_unknown_keys.yaml", "… and 19,"),
        timeout=30,
    )
    write("long_string.yaml", contract_text(**{"id: CN-AGENT-2026-017": "id: " + "x" * 10_000_000}))
    add(
        "10mb_string",
        5,
        ["validate", str(d / "long_string.yaml")],
        says=("long_string.yaml",),
        timeout=20,
    )
    write("big_mapping.yaml", "columns:\n" + "".join(f"  f{i}: c{i}\n" for i in range(300_000)))
    add(
        "huge_mapping",
        5,
        ["traces", "inspect", str(good), "--mapping", str(d / "big_mapping.yaml")],
        says=("big_mapping.yaml",),
        timeout=20,
    )

    # -- 6: outputs destroy data ------------------------------------------------------------
    keep = write("keep.md", "# a good document\n")
    add(
        "draft_over_its_contract",
        6,
        ["draft", str(contract), "-o", str(contract), "--format", "md"],
        says=("contract.yaml", "input"),
        unchanged=(str(contract),),
    )
    add(
        "report_over_its_trace",
        6,
        [
            "report",
            str(contract),
            str(good),
            "-o",
            str(good),
            "--format",
            "md",
            "--period",
            "2026-07",
        ],
        says=("good.json", "input"),
        unchanged=(str(good),),
    )
    add(
        "failed_report_keeps_old",
        6,
        ["report", str(contract), str(good), "-o", keep, "--period", "9999-Q4"],
        unchanged=(keep,),
        says=("9999-Q4",),
    )
    link = d / "link.yaml"
    link.symlink_to(contract)
    add(
        "junit_over_contract_by_link",
        6,
        ["check", str(contract), str(good), "--junit", str(link)],
        says=("input",),
        unchanged=(str(contract),),
    )

    # -- 7: unescaped text ------------------------------------------------------------------
    script = [otlp_span(i, traceId="<script>alert(1)</script>" + str(i)) for i in range(3)]
    write("script_ids.json", json.dumps(otlp_doc(script)))
    add(
        "check_md_script_ids",
        7,
        ["check", str(contract), str(d / "script_ids.json"), "--format", "md"],
        VALID,
        forbidden=("<script", "Traceback"),
    )
    img = _attr(otlp_span(0), "gen_ai.request.model", {"stringValue": "<img src=x onerror=1>"})
    write("img.json", json.dumps(otlp_doc([img])))
    add(
        "fields_md_img",
        7,
        ["fields", str(contract), str(d / "img.json"), "--format", "md"],
        VALID,
        forbidden=("<img", "Traceback"),
    )
    esc = [otlp_span(i, traceId=f"\x1b]0;pwned\x07\x1b[31m{i}") for i in range(3)]
    esc.append(otlp_span(9, endTimeUnixNano="not a time"))
    escaped = d / "e\x1b[31mvil.json"
    escaped.write_text(json.dumps(otlp_doc(esc)))
    add(
        "terminal_escapes_in_ids_and_paths",
        7,
        ["traces", "inspect", str(escaped)],
        VALID,
        forbidden=("\x1b", "Traceback"),
    )
    add(
        "terminal_escapes_in_ids_check",
        7,
        ["check", str(contract), str(escaped)],
        VALID,
        forbidden=("\x1b", "Traceback"),
    )
    write("escape_key.yaml", base + "\x1b[2J\x1b[31mevil: 1\n")
    add(
        "terminal_escapes_in_keys",
        7,
        ["validate", str(d / "escape_key.yaml")],
        says=("escape_key.yaml",),
        forbidden=("\x1b", "Traceback"),
    )
    write("escape_key2.yaml", base + '"\\e[2J\\e[31mevil": 1\n')
    add(
        "terminal_escapes_in_quoted_keys",
        7,
        ["validate", str(d / "escape_key2.yaml")],
        says=("escape_key2.yaml", "evil"),
        forbidden=("\x1b", "Traceback"),
    )

    # -- 8: messages ------------------------------------------------------------------------
    write("latin1.yaml", base.encode("utf-8") + "# caf\xe9\n".encode("latin-1"))
    add(
        "non_utf8_contract",
        8,
        ["validate", str(d / "latin1.yaml")],
        says=(f"latin1.yaml:{base.count(chr(10)) + 1}:",),
    )
    write("bad_mapping.yaml", "columns:\n  task_id: a\n  span_id: [b\n")
    add(
        "yaml_error_in_mapping",
        8,
        ["traces", "inspect", str(good), "--mapping", str(d / "bad_mapping.yaml")],
        says=("bad_mapping.yaml:",),
    )
    import gzip

    write("gz.json", gzip.compress(good.read_bytes()))
    add("gzip_json", 8, ["traces", "inspect", str(d / "gz.json")], says=("gz.json", "gzip"))
    write("utf16.json", good.read_text().encode("utf-16"))
    add(
        "utf16_json", 8, ["traces", "inspect", str(d / "utf16.json")], says=("utf16.json", "UTF-16")
    )
    (d / "folder.json").mkdir()
    add(
        "folder_as_trace",
        8,
        ["traces", "inspect", str(d / "folder.json")],
        says=("folder.json", "folder"),
    )
    loop = d / "loop.json"
    loop.symlink_to(loop)
    add("symlink_loop_trace", 8, ["traces", "inspect", str(loop)], says=("loop.json", "loop"))
    add("symlink_loop_contract", 8, ["validate", str(loop)], says=("loop.json", "loop"))
    mapping = write(
        "csv_mapping.yaml",
        "columns:\n  task_id: task\n  span_id: span\n  kind: kind\n  start_us: start\n"
        "  end_us: end\n  input_tokens: tokens\ntimestamp_format: iso8601\n",
    )
    write(
        "range.csv",
        "task,span,kind,start,end,tokens\n"
        "t1,s1,llm,2026-07-01T00:00:00Z,2026-07-01T00:00:01Z,12\n"
        "t2,s2,llm,2026-07-01T00:00:00Z,2026-07-01T00:00:01Z,99999999999999999999999\n",
    )
    add(
        "csv_value_out_of_range",
        8,
        ["traces", "inspect", str(d / "range.csv"), "--mapping", mapping],
        VALID,
    )

    # -- slow: sizes ------------------------------------------------------------------------
    terms = "".join(
        f"  - id: T{i}\n    measurement_point: full_response\n"
        f"    objective: {{kind: occurrence, percentile: 95, threshold: 6000}}\n"
        for i in range(5000)
    )
    write("5000_terms.yaml", base.replace("latency:\n", "latency:\n" + terms, 1))
    add(
        "5000_terms_check",
        5,
        ["check", str(d / "5000_terms.yaml"), str(good)],
        VALID | BAD,
        slow=True,
        timeout=120,
    )
    return cases


def main() -> None:
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for case in build(folder):
        print(case.name, " ".join(case.argv))


if __name__ == "__main__":
    main()
