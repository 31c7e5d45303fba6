"""A record key may be named like a record's own attribute: ``SHORTCUT kind=identity`` in
residual-stream-v4 is found by its key and reads back its own value, not the record's kind."""

from __future__ import annotations

import pytest
from paths import RECORDS_DIR

from tracefile import SCHEMAS, Trace, load_trace
from tracefile.errors import TracePathError
from tracefile.schema import Record


@pytest.fixture(scope="module")
def stream_trace() -> Trace:
    return load_trace(RECORDS_DIR / "residual-stream-v4.trace", SCHEMAS["residual-stream-v4"])


def test_a_key_named_kind_resolves_by_its_value(stream_trace: Trace) -> None:
    kinds = [record.value("kind") for record in stream_trace.shortcut]
    assert kinds == ["identity", "orthogonal", "random", "badly-scaled"]
    for kind in kinds:
        assert stream_trace.resolve(f"SHORTCUT[{kind}].kind") == kind
    ratio = stream_trace.resolve("SHORTCUT[badly-scaled].ratio")
    assert ratio == stream_trace.shortcut[-1].value("ratio")


def test_the_record_kind_is_still_the_record_kind(stream_trace: Trace) -> None:
    assert all(record.kind == "SHORTCUT" for record in stream_trace.shortcut)
    with pytest.raises(TracePathError, match="the trace has kind identity, orthogonal"):
        stream_trace.resolve("SHORTCUT[SHORTCUT].ratio")


def test_value_of_an_unknown_key_is_an_attribute_error() -> None:
    record = Record("SHORTCUT", {"kind": "identity"})
    assert record.value("kind") == "identity"
    with pytest.raises(AttributeError, match="SHORTCUT has no key ratio"):
        record.value("ratio")
