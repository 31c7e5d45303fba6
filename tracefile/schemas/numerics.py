"""The ``NUMERICS`` record: which kernels computed a trace, in each trace whose values go
through BLAS and numpy's CPU-specific loops (the labs'; the chapter's values are exact).

The engine fills it from the libraries it loaded (engine/numerics.py). ``reference=true``:
the pinned reference kernels ran, and the trace has the same bytes on every x86-64 machine
with AVX2 and the same libraries, which the record names (docs/building.md, "The same
numbers on every machine"); ``false``: its values can differ from the published ones, by
rounding and by what training makes of rounding. `numerics_of(trace)` is a trace's record,
or None where its schema declares none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracefile.schema import Key, Record, RecordSpec

if TYPE_CHECKING:
    from tracefile.trace import Trace

NUMERICS = RecordSpec("NUMERICS", (
    Key("reference", "bool",
        doc="the pinned reference kernels ran, so this trace has the same bytes on every "
            "machine that can run them with the same libraries"),
    Key("machine", "name", doc="the processor architecture"),
    Key("blas", "name", doc="the BLAS library and its version"),
    Key("kernel", "name", doc="the BLAS kernels it ran (the reference: Haswell)"),
    Key("threads", "int", doc="BLAS threads (the reference: one)"),
    Key("numpy", "name", doc="the numpy version"),
    Key("simd", "names",
        doc="numpy's CPU loops: its baseline level, then each level it dispatched to (the "
            "reference stops one level above the baseline)"),
    Key("libc", "name", doc="the C library, whose maths library computes exp, log and power"),
), source="numerics", doc="the kernels that computed this trace")


def numerics_of(trace: Trace) -> Record | None:
    """A trace's NUMERICS record, or None for a trace that holds none (the chapter's)."""
    return trace.numerics if NUMERICS in trace.schema.records else None
