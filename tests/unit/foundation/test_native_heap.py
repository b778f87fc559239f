"""The C allocator's arena cap and trim (`native_heap`), where the C library is glibc."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from iii_directory import native_heap

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

ARENAS_OF_THREADS = r"""
import ctypes, os, re, sys, tempfile, threading
from iii_directory.native_heap import limit_arenas
cap = int(sys.argv[1])
if cap:
    assert limit_arenas(cap)
gate = threading.Barrier(6)
def allocate():
    gate.wait()  # all six threads allocate at once, each wanting an arena of its own
    kept = [bytearray(4096) for _ in range(200)]
    gate.wait()
    del kept
threads = [threading.Thread(target=allocate) for _ in range(6)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
libc = ctypes.CDLL(None)
libc.fdopen.restype = ctypes.c_void_p
libc.fdopen.argtypes = [ctypes.c_int, ctypes.c_char_p]
with tempfile.TemporaryFile() as out:
    stream = libc.fdopen(os.dup(out.fileno()), b"w")
    libc.malloc_info(0, ctypes.c_void_p(stream))
    libc.fclose(ctypes.c_void_p(stream))
    out.seek(0)
    print(len(re.findall(rb'<heap nr="', out.read())))
"""


def _arenas(cap: int) -> int:
    done = subprocess.run([sys.executable, "-c", ARENAS_OF_THREADS, str(cap)], capture_output=True,
                          text=True, check=True)
    return int(done.stdout.strip())


@pytest.mark.skipif(not GLIBC, reason="glibc's arenas")
def test_capped_arenas_are_shared_by_the_threads_beyond_the_cap() -> None:
    assert _arenas(0) > 2  # six threads allocating at once: arenas of their own
    assert _arenas(2) == 2  # the main heap and one the threads share


def test_a_cap_below_one_is_refused() -> None:
    assert native_heap.limit_arenas(0) is False


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc_trim")
def test_trim_hands_back_the_free_pages_between_live_blocks() -> None:
    script = ("from iii_directory.native_heap import trim\n"
              "blocks = [bytearray(65536) for _ in range(400)]\n"
              "del blocks[::2]  # free chunks between live ones: never the heap's top\n"
              "print(trim())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_without_the_c_functions_both_are_no_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native_heap, "_LIBC", False)
    assert native_heap.limit_arenas(2) is False
    assert native_heap.trim() is False
