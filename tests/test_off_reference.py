"""The suite passes off the reference numerics too: on a machine that cannot pin the engine's
kernels (ARM, an x86 without AVX2) the labs are held to measured tolerances and to their
verdicts instead of bytes (tests/trace_tolerance.py), and nothing else may depend on the
reference's last bits.

Shown here on the reference machine by running the fast loop (every test but the browser
tests and the full builds) in a nested session, and the decoder lab's fresh run, with the
kernels of an x86 without AVX2, as far as they can be forced: OpenBLAS's Sandybridge kernels
and numpy's baseline loops, unpinned (``ENGINE_NUMERICS=native``); the lab's run is held to
its record within the measured tolerances (`trace_tolerance.assert_trace_matches_golden`).
What it cannot show: an ARM machine's kernels, and the C library's own choice of maths
routines on such a CPU.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from numerics_support import WITHOUT_AVX2, reference_machine, with_kernels
from paths import ROOT
from trace_tolerance import OFF_REFERENCE

DECODER = "residual-stream-v4"
pytestmark = pytest.mark.longest


def nested(*args: str) -> subprocess.CompletedProcess[str]:
    """A pytest session of the project's own suite under ``WITHOUT_AVX2``, taking nothing of
    this session's (its options, worker ids, the path an outer worker set)."""
    env = {name: value for name, value in with_kernels(WITHOUT_AVX2).items()
           if not name.startswith("PYTEST_") and name != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT,
        env=env, capture_output=True, text=True, timeout=1200)


@pytest.mark.slow
def test_the_fast_loop_passes_off_the_reference_numerics() -> None:
    reference_machine()
    done = nested("-n", "2", "--dist", "loadgroup", "-m", "not slow and not browser")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1], done.stdout[-500:]


@pytest.mark.slow
def test_decoder_cells_hold_to_their_records_off_the_reference_numerics(tmp_path) -> None:
    """Two recorded cells of the decoder lab's grid retrained with other kernels: their losses
    within the lab's tolerances of their records, their weights not bit for bit (the whole
    lab's run off the reference, which measured those tolerances, takes a quarter of an hour
    on two cores under these kernels: `python -m engine trace residual-stream-v4` with
    ``numerics_support.WITHOUT_AVX2``)."""
    reference_machine()
    script = ("import json, sys; from engine.numerics import pin; pin(); "
              "from engine import cell_records as c; "
              "train = c.trainer('residual-stream grid'); "
              "lines = [json.loads(x) for x in sys.stdin]; "
              "print(json.dumps([c.encode(train(c.rebuild(x['cell'], "
              "'engine.experiments.residual_stream.cells'))) for x in lines]))")
    path = ROOT / "records" / "cells" / "residual-stream-grid.jsonl"
    recorded = [json.loads(line) for line in path.read_text().splitlines()
                if "depth=2," in line][:2]
    assert len(recorded) == 2
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=_forced_env(tmp_path),
                          input="".join(json.dumps(r) + "\n" for r in recorded),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    tolerances = OFF_REFERENCE[DECODER]
    for got, want in zip(json.loads(done.stdout), recorded, strict=True):
        assert got["precision"] == want["result"]["precision"]
        assert got != want["result"]  # other kernels: other bits
        for key, tolerance in (("final_validation", "TRAINING.final-validation"),
                               ("final_train", "TRAINING.final-train")):
            (mine,), (theirs,) = got[key]["values"], want["result"][key]["values"]
            rtol, atol = tolerances[tolerance]
            assert abs(mine - theirs) <= rtol * abs(theirs) + atol, (key, mine, theirs)


def _forced_env(tmp_path) -> dict[str, str]:
    env = {**with_kernels(WITHOUT_AVX2), "ENGINE_CELL_CACHE": str(tmp_path / "cells"),
           "PYTHONPATH": str(ROOT)}
    env.pop("ENGINE_CELL_RECORDS", None)
    return env
