"""The JSON document readers (Langfuse, LangSmith, OTLP) made faster read every file exactly as
before (issue 27): the same canonical rows, values, defects and order, or the same located
problems, on hostile generated documents, the hostile corpus and every fixture
(``json_corpus.DIGESTS`` pins what the readers gave before the change)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.json_corpus import CASES, DIGESTS, MAKERS, digests, write_corpus


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return digests(tmp_path_factory.mktemp("json-corpus"))


def test_every_file_reads_as_before(found: dict[str, str]) -> None:
    pinned = json.loads(DIGESTS.read_text(encoding="utf-8"))
    assert found.keys() == pinned.keys()
    changed = sorted(name for name in pinned if found[name] != pinned[name])
    assert not changed, f"read differently than before: {changed}"


def test_the_corpus_holds_every_hostile_value(tmp_path: Path) -> None:
    """The generated files reach the readers' edges: rows set aside for every reason numbers
    and timestamps give, in each format; refused files; every shape."""
    from slacheck.errors import TraceInputError
    from slacheck.trace.ingest import _json_readers

    reasons: dict[str, set[str]] = {fmt: set() for fmt in MAKERS}
    refused: dict[str, int] = dict.fromkeys(MAKERS, 0)
    for fmt, path in write_corpus(tmp_path):
        try:
            table = _json_readers()[fmt](path)
        except TraceInputError:
            refused[fmt] += 1
            continue
        for defect in table.column("defect").to_pylist():
            reasons[fmt] |= {d.split(":")[0] for d in (defect or "").split(";") if d}
    for fmt in MAKERS:
        assert reasons[fmt] >= {"unparseable_timestamp", "unparseable_number"}, fmt
        assert 0 < refused[fmt] < CASES // 2, fmt
