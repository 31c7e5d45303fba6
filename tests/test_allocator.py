"""Tests for engine/allocator.py: a speed setting that never changes a result, made by the
runners (``python -m engine``, `train`) and never by importing the engine.

Whether it was made is read from glibc itself, in a fresh process: with the default mmap
threshold a 16 MiB block is an mmap of its own (``mallinfo2().hblks`` grows); with the raised
one it comes from the heap."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest
from paths import ROOT

from engine.allocator import keep_freed_memory

PROBE = """
import ctypes, ctypes.util, sys
class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks",
                "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
exec(sys.argv[1])
before = libc.mallinfo2().hblks
libc.malloc(16 << 20)
print("mmapped" if libc.mallinfo2().hblks > before else "heap")
print("allocator imported" if "engine.allocator" in sys.modules else "allocator not imported")
"""

libc, version = platform.libc_ver()
glibc = pytest.mark.skipif(
    libc != "glibc" or tuple(map(int, version.split("."))) < (2, 33),
    reason="mallinfo2 is glibc's, from 2.33")


def probe(code: str) -> list[str]:
    """The last two lines ``PROBE`` prints after running ``code`` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", PROBE, code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    return done.stdout.splitlines()[-2:]


def test_keep_freed_memory_runs_once_and_reports_a_bool():
    assert isinstance(keep_freed_memory(), bool)
    assert keep_freed_memory() is keep_freed_memory()


@glibc
def test_importing_the_engine_leaves_malloc_alone():
    assert probe("import engine") == ["mmapped", "allocator not imported"]
    assert probe("import engine.models, engine.experiments, engine.trace")[0] == "mmapped"


@glibc
def test_python_m_engine_keeps_freed_memory():
    assert probe("from engine.__main__ import main; main(['traces'])")[0] == "heap"
