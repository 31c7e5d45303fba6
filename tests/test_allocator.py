"""Tests for engine/allocator.py: a speed setting that never changes a result, made for every
process a run starts (``python -m engine``) and never by importing the engine.

Whether a process keeps its freed memory is read from glibc itself, in a fresh process: with
the default mmap threshold a 16 MiB block is an mmap of its own (``mallinfo2().hblks``
grows); with the raised one it comes from the heap."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys

import pytest
from paths import ROOT

from engine.allocator import MALLOC_ENVIRONMENT

PROBE = """
import ctypes, ctypes.util
class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks",
                "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
before = libc.mallinfo2().hblks
libc.malloc(16 << 20)
print("mmapped" if libc.mallinfo2().hblks > before else "heap")
"""

libc, version = platform.libc_ver()
glibc = pytest.mark.skipif(
    libc != "glibc" or tuple(map(int, version.split("."))) < (2, 33),
    reason="mallinfo2 is glibc's, from 2.33")


def without_settings() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in MALLOC_ENVIRONMENT}


def run(code: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True, env=env)
    return done.stdout.strip()


@glibc
def test_glibc_reads_the_settings_when_a_process_starts():
    assert run(PROBE, without_settings()) == "mmapped"
    assert run(PROBE, {**without_settings(), **MALLOC_ENVIRONMENT}) == "heap"


def test_importing_the_engine_sets_nothing():
    code = ("import os, engine, engine.models, engine.experiments, engine.trace; "
            f"print(sorted(set(os.environ) & {set(MALLOC_ENVIRONMENT)!r}))")
    assert run(code, without_settings()) == "[]"


@glibc
def test_python_m_engine_starts_every_process_with_them():
    code = ("import subprocess, sys; from engine.__main__ import main; main(['traces']); "
            f"print(subprocess.run([sys.executable, '-c', {PROBE!r}], capture_output=True, "
            "text=True).stdout.strip())")
    assert run(code, without_settings()).splitlines()[-1] == "heap"


def test_dev_exports_the_same_settings():
    exported = dict(re.findall(r'export (MALLOC_\w+)="\$\{\1:-(\d+)\}"',
                               (ROOT / "dev").read_text(encoding="utf-8")))
    assert exported == MALLOC_ENVIRONMENT
