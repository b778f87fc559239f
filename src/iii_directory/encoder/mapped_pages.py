"""Handing back the resident pages of a read-only file mapping (Linux `madvise`).

The encoder loads its saved optimized graph with the weights in an external file that
onnxruntime maps read-only (`_rank.dense.Encoder`, `weights.bin`, ~90 MB of float32). The
matrix weights are copied into packed buffers when the session is built; what stays mapped is
read on use — mostly the 30,522 × 384 word-embedding table, one 1.5 KB row per distinct token
ever embedded. Those pages count in the worker's RSS and only grow: a cold `serve` that embedded
its skills, triggers and registry contracts held 45 MiB of them after 200 searches (24 MiB
warm). They are clean copies of the file, so `MADV_DONTNEED` drops them from this process at no
risk (the kernel keeps them in its page cache while memory allows; a later read faults the
touched rows back, a few per query). `release_file_pages` does that for every mapping of one
file that holds no page of its own (`clean_mappings`) and that the process's own map lists too;
a no-op where `/proc/self/smaps` or `madvise` do not exist, or where `smaps` does not describe
this program (a user-mode emulator).
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

log = logging.getLogger(__name__)

MADV_DONTNEED = 4  # spec: Linux madvise(2), the same on every architecture
"""Linux `MADV_DONTNEED` (the same value on every Linux architecture)."""

_MADVISE: object = None


def _madvise() -> object:
    """The C library's `madvise`, or False where it cannot be called or must not be: where
    `/proc/self/smaps` does not describe this program (`describes_this_program`, checked once)."""
    global _MADVISE
    if _MADVISE is None:
        try:
            import ctypes

            function = ctypes.CDLL(None, use_errno=True).madvise
            function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            function.restype = ctypes.c_int
            _MADVISE = function if describes_this_program() else False
        except (OSError, AttributeError):
            _MADVISE = False
    return _MADVISE


def _mapped_files(path: str) -> set[str]:
    """The files (absolute paths) that a `/proc/<pid>/maps`-format file lists as mapped."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        lines = handle.read().splitlines()
    files = set()
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and "-" in fields[0] and fields[5].startswith("/"):
            files.add(fields[5])
    return files


def describes_this_program(smaps: str = "/proc/self/smaps", maps: str = "/proc/self/maps",
                           attempts: int = 3) -> bool:
    """Whether `smaps` describes this program: every file it lists as mapped is one the
    program's own map (`maps`) lists too, in one of `attempts` readings (a file unmapped between
    the two reads fails one reading, not all). Under a user-mode emulator (qemu-user) `maps` is
    the program's while `smaps` is the emulator's, which lists the emulator's own executable;
    spans it called clean were advised under qemu-arm 7.2 before this check, and the program
    later crashed loading a library. False when either cannot be read: the release is then
    skipped, never guessed."""
    for _ in range(attempts):
        try:
            if _mapped_files(smaps) <= _mapped_files(maps):
                return True
        except OSError:
            return False
    return False


def listed_mappings(path: Path, maps: str = "/proc/self/maps") -> set[tuple[int, int]]:
    """`(start, end)` of every mapping of `path` in the process's own map (`maps`); empty when
    it cannot be read."""
    try:
        target = os.path.realpath(path)
        with open(maps, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return set()
    listed: set[tuple[int, int]] = set()
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5] == target and "-" in fields[0]:
            start, _, end = fields[0].partition("-")
            listed.add((int(start, 16), int(end, 16)))
    return listed


def clean_mappings(path: Path, smaps: str = "/proc/self/smaps",
                   maps: str = "/proc/self/maps") -> list[tuple[int, int]]:
    """`(start, end)` of every mapping of `path` in `smaps` that holds no page of its own: not
    writable, or private and writable (onnxruntime maps its weights `rw-p`) with no anonymous
    (copied-on-write) page. Dropping such a mapping's pages loses nothing.

    Only ranges that `maps` lists for the same file count: under a user-mode emulator
    (qemu-user, as in multi-arch containers) `maps` is the program's own map while `smaps`
    describes the emulator's, and advising those addresses would drop the program's memory."""
    try:
        target = os.path.realpath(path)
        with open(smaps, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return []
    found: list[tuple[int, int]] = []
    # only the blocks of `path` are parsed: the whole file is thousands of lines for a worker
    # with onnxruntime loaded, and this runs on the encoder thread holding the GIL
    needle = f" {target}\n"
    at = text.find(needle)
    while at >= 0:
        header_start = text.rfind("\n", 0, at) + 1
        fields = text[header_start:at + len(needle) - 1].split(maxsplit=5)
        block_end = text.find("\nVmFlags:", at)
        block = text[at:block_end if block_end >= 0 else len(text)]
        if len(fields) == 6 and fields[5] == target and "-" in fields[0] and ":" in fields[3]:
            begin, _, finish = fields[0].partition("-")
            permissions = fields[1]
            anonymous = _field_kb(block, "Anonymous:")
            if permissions.endswith("p") and anonymous == 0:
                permissions = permissions.replace("w", "-")
            if "w" not in permissions:
                found.append((int(begin, 16), int(finish, 16)))
        at = text.find(needle, at + len(needle))
    if not found:
        return found
    listed = listed_mappings(path, maps)
    return [span for span in found if span in listed]


def _field_kb(block: str, name: str) -> int | None:
    """The kB value of the `name` line of one smaps block (None when it has none)."""
    at = block.find(f"\n{name}")
    if at < 0:
        return None
    line_end = block.find("\n", at + 1)
    fields = block[at + 1:line_end if line_end >= 0 else len(block)].split()
    return int(fields[1]) if len(fields) >= 2 and fields[1].isdigit() else None


def release_file_pages(path: Path) -> int:
    """Drop this process's resident pages of every clean mapping of `path`; returns the
    bytes advised (0 when nothing is mapped or the platform cannot)."""
    madvise = _madvise()
    if not madvise:
        return 0
    advised = 0
    for start, end in clean_mappings(path):
        if madvise(start, end - start, MADV_DONTNEED) == 0:  # type: ignore[operator]
            advised += end - start
        else:
            log.debug("madvise(%s) failed: errno %d", path, __import__("ctypes").get_errno())
    return advised


SHARED_OBJECT = re.compile(r"\.so(\.[0-9]+)*$")
"""A mapped file's base name that makes it a shared library (`libpython3.11.so.1.0`,
`_core.abi3.so`): the files `library_mappings` considers."""


def library_mappings(smaps: str = "/proc/self/smaps", maps: str = "/proc/self/maps") -> list[tuple[int, int]]:
    """`(start, end)` of every mapping of a loaded shared library (`SHARED_OBJECT`) in `smaps`
    whose pages are all the file's own: not writable, no anonymous (copied-on-write) page,
    nothing locked. The code and read-only data of a library qualify; its relocated data
    (RELRO, `.data`) never does, since relocation wrote to it.

    A library counts only once the loader has finished mapping it: one of its mappings holds
    anonymous pages (its relocated data). While the loader is still mapping a library (another
    thread's `dlopen`), a read-only span of it may be about to be replaced by its writable data,
    and dropping that would lose the relocations. Only spans that `maps` lists with the same
    permissions and file count (see `clean_mappings` for why, and so that a mapping replaced
    since `smaps` was read is left alone). CPython never unloads a library, so a listed span
    still holds that library when it is advised."""
    try:
        with open(smaps, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return []
    candidates: list[tuple[int, int, str, str]] = []
    relocated: set[str] = set()
    header: list[str] | None = None
    anonymous = locked = 0

    def close_block() -> None:
        if header is None or len(header) != 6 or not SHARED_OBJECT.search(header[5]):
            return
        if anonymous:
            relocated.add(header[5])
        elif locked == 0 and "w" not in header[1]:
            begin, _, finish = header[0].partition("-")
            candidates.append((int(begin, 16), int(finish, 16), header[1], header[5]))

    for line in text.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) >= 5 and "-" in fields[0] and ":" in fields[3]:  # a mapping's header line
            close_block()
            header, anonymous, locked = fields, 0, 0
        elif fields and fields[0] in ("Anonymous:", "Locked:"):
            value = int(fields[1]) if len(fields) >= 2 and fields[1].isdigit() else 1
            if fields[0] == "Anonymous:":
                anonymous = value
            else:
                locked = value
    close_block()
    candidates = [span for span in candidates if span[3] in relocated]
    if not candidates:
        return []
    try:
        with open(maps, encoding="utf-8", errors="replace") as handle:
            listed = set()
            for line in handle.read().splitlines():
                fields = line.split(maxsplit=5)
                if len(fields) == 6 and "-" in fields[0]:
                    begin, _, finish = fields[0].partition("-")
                    listed.add((int(begin, 16), int(finish, 16), fields[1], fields[5]))
    except OSError:
        return []
    return [(start, end) for start, end, perms, name in candidates if (start, end, perms, name) in listed]


def release_library_pages() -> int:
    """Drop this process's resident pages of the shared libraries' clean mappings
    (`library_mappings`); returns the bytes advised (0 where the platform cannot).

    Why: loading a library and building what it serves (onnxruntime's kernel registry and
    session, pydantic-core's validators) touches far more of its code than later calls run, and
    those pages stay in the process's RSS. They are clean copies of the file: after
    `MADV_DONTNEED` the kernel keeps them in its page cache while memory allows and later calls
    fault back only the code they run. Meant to run once after a load, not repeatedly (each
    call makes the next calls fault their working set back). Figures: docs/record/performance.md,
    "Where a soak worker's memory goes"."""
    madvise = _madvise()
    if not madvise:
        return 0
    advised = 0
    for start, end in library_mappings():
        if madvise(start, end - start, MADV_DONTNEED) == 0:  # type: ignore[operator]
            advised += end - start
    return advised


def release_start_up_pages() -> int:
    """`release_library_pages`, then the resident pages of the static lane's packaged word-piece
    table (`_rank`'s, mapped read-only and shared: its rows are read when a catalog's static
    index is built, then only a request's few words); returns the bytes advised."""
    advised = release_library_pages()
    try:
        from _rank._assets import static_table_path
    except ImportError:  # a ranking core without the packaged table
        return advised
    return advised + release_file_pages(static_table_path())
