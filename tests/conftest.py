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
