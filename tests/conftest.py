"""Shared fixtures: the real samples in tests/data, generated traffic, a Spark backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests" / "data" / "real"


@pytest.fixture(scope="session")
def samples() -> Path:
    # A missing folder is a failure, never a skip.
    assert SAMPLES.is_dir(), f"real samples not found at {SAMPLES}"
    return SAMPLES


@pytest.fixture(scope="session")
def generated_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = tmp_path_factory.mktemp("gen") / "traffic.parquet"
    write(generate(TrafficProfile(tasks=200, days=3, seed=7, malformed=5)), path, "parquet")
    return path


@pytest.fixture(scope="session")
def spark_backend() -> Iterator[Any]:
    from slacheck.engine import connect

    yield connect("spark")


#: The modules whose tests take longest (each a few minutes of a worker's time: engine parity,
#: property tests over whole evaluations, Spark), longest first. ``make test`` hands whole
#: modules to two workers in collection order (``--dist loadfile --no-loadscope-reorder``:
#: xdist's own order puts the modules of most tests first, and these have few); collected
#: first, the long ones start at once and the many short modules fill in around them, instead
#: of a long module arriving last and running alone while the other worker idles (minutes).
LONGEST_FIRST = (
    "test_otlp_engine.py",
    "test_record.py",
    "test_metering.py",
    "test_status.py",
    "test_check_others.py",
    "test_check_latency.py",
    "test_evaluate.py",
    "test_match.py",
    "test_ingest.py",
    "hostile/test_hostile.py",
    "test_messages.py",
    "test_engine.py",
    "test_render.py",
    "test_remote.py",
    "test_prepared.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long modules first (``LONGEST_FIRST``), each module's own order kept."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}

    def module_rank(item: pytest.Item) -> int:
        tests = ROOT / "tests"
        if not item.path.is_relative_to(tests):
            return len(rank)
        return rank.get(item.path.relative_to(tests).as_posix(), len(rank))

    items.sort(key=module_rank)  # stable: the rest keep pytest's order
