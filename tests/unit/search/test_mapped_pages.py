"""`mapped_pages`: the resident pages of a read-only file mapping are handed back, the data
reads the same afterwards, and writable mappings are never touched."""

from __future__ import annotations

import mmap
import sys
from pathlib import Path

import pytest

from iii_directory.encoder.mapped_pages import (clean_mappings, library_mappings, release_file_pages,
                                                 release_library_pages)

PAGE = mmap.PAGESIZE


def spans(path: str) -> set[str]:
    with open(path, encoding="utf-8") as handle:
        return {line.split()[0] for line in handle if line[:1].isalnum() and "-" in line.split()[0]
                and len(line.split()) >= 5 and ":" in line.split()[3]}


def own_smaps() -> bool:
    """Whether /proc/self/smaps describes this program: under qemu-user it describes the
    emulator (its /proc/self/maps is the program's)."""
    try:
        return spans("/proc/self/smaps") == spans("/proc/self/maps")
    except OSError:
        return False


live = pytest.mark.skipif(not sys.platform.startswith("linux") or not own_smaps(),
                          reason="needs a /proc/self/smaps of this program (Linux, no user-mode emulator)")


def resident_kib(path: Path) -> int:
    """Rss of this process's mappings of `path` (from /proc/self/smaps)."""
    total, inside = 0, False
    target = str(path.resolve())
    with open("/proc/self/smaps", encoding="utf-8") as handle:
        for line in handle:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5 and ":" in head[3]:
                inside = len(head) >= 6 and head[5] == target
            elif inside and line.startswith("Rss:"):
                total += int(head[1])
    return total


@live
def test_release_drops_the_resident_pages_and_the_data_reads_back(tmp_path: Path) -> None:
    data = bytes(range(256)) * (256 * PAGE // 256)  # 256 pages
    weights = tmp_path / "weights.bin"
    weights.write_bytes(data)
    with weights.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
        assert sum(view[i] for i in range(0, len(data), PAGE)) >= 0  # touch every page
        before = resident_kib(weights)
        assert before >= 200 * PAGE // 1024
        assert release_file_pages(weights) == len(data)
        assert resident_kib(weights) < before // 4
        assert view[:] == data  # faulted back from the file: nothing lost


def test_only_mappings_of_that_file_without_pages_of_their_own_are_listed(tmp_path: Path) -> None:
    target, other = tmp_path / "a.bin", tmp_path / "b.bin"
    smaps = tmp_path / "smaps"

    def entry(span: str, perms: str, name: Path | str, anonymous: int) -> str:
        return (f"{span} {perms} 00000000 08:01 1 {name}\nSize: 8 kB\nRss: 8 kB\n"
                f"Anonymous: {anonymous} kB\nVmFlags: rd mr\n")

    smaps.write_text(
        entry("7f0000000000-7f0000002000", "r--p", target, 0)
        + entry("7f0000002000-7f0000003000", "rw-p", target, 0)   # onnxruntime's weights
        + entry("7f0000003000-7f0000004000", "rw-p", target, 4)   # a written page: kept
        + entry("7f0000004000-7f0000005000", "rw-s", target, 0)   # shared writable: kept
        + entry("7f0000005000-7f0000006000", "r--p", other, 0)
        + entry("7f0000006000-7f0000007000", "rw-p", "", 4),
        encoding="utf-8")
    maps = tmp_path / "maps"
    maps.write_text("".join(f"{span} {perms} 00000000 08:01 1 {name}\n" for span, perms, name in (
        ("7f0000000000-7f0000002000", "r--p", target), ("7f0000002000-7f0000003000", "rw-p", target),
        ("7f0000003000-7f0000004000", "rw-p", target), ("7f0000004000-7f0000005000", "rw-s", target),
        ("7f0000005000-7f0000006000", "r--p", other))), encoding="utf-8")
    assert clean_mappings(target, str(smaps), str(maps)) == [(0x7F0000000000, 0x7F0000002000),
                                                             (0x7F0000002000, 0x7F0000003000)]


def test_mappings_the_programs_own_map_does_not_list_are_never_advised(tmp_path: Path) -> None:
    """Under a user-mode emulator smaps shows the emulator's mappings at other addresses: none
    of them may be advised (it would drop the program's own memory)."""
    target = tmp_path / "a.bin"
    smaps, maps = tmp_path / "smaps", tmp_path / "maps"
    smaps.write_text(f"7f0000000000-7f0000002000 r--p 00000000 08:01 1 {target}\nSize: 8 kB\n"
                     "Anonymous: 0 kB\n", encoding="utf-8")
    maps.write_text(f"40000000-40002000 r--p 00000000 08:01 1 {target}\n", encoding="utf-8")
    assert clean_mappings(target, str(smaps), str(maps)) == []
    assert clean_mappings(target, str(smaps), str(tmp_path / "no-maps")) == []


def test_nothing_mapped_releases_nothing(tmp_path: Path) -> None:
    assert release_file_pages(tmp_path / "absent.bin") == 0
    assert clean_mappings(tmp_path / "absent.bin", str(tmp_path / "no-smaps")) == []


@live
def test_the_dense_lane_encoder_release_trims_then_hands_back_the_weights(tmp_path: Path) -> None:
    from iii_directory.encoder.dense_lane import _releasing

    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"\x01" * (64 * PAGE))
    calls: list[str] = []
    release = _releasing(lambda: calls.append("trim"), weights)
    with weights.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
        assert sum(view[i] for i in range(0, len(view), PAGE)) == 64
        before = resident_kib(weights)
        release()
        assert calls == ["trim"] and resident_kib(weights) < before


@live
def test_a_private_writable_mapping_is_released_until_a_page_of_it_is_written(tmp_path: Path) -> None:
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"\x02" * (32 * PAGE))
    with weights.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY) as view:
        assert sum(view[i] for i in range(0, len(view), PAGE)) == 64  # rw-p, nothing written
        assert release_file_pages(weights) == 32 * PAGE
        view[0] = 9  # now it holds a page of its own: never dropped again
        assert release_file_pages(weights) == 0
        assert view[0] == 9 and view[PAGE] == 2


def test_library_mappings_are_the_clean_read_only_spans_of_loaded_shared_libraries(tmp_path: Path) -> None:
    lib, loading, data = "/usr/lib/libx.so.1.2", "/opt/y.abi3.so", "/data/table.bin"

    def entry(span: str, perms: str, name: str, anonymous: int, locked: int = 0) -> str:
        return (f"{span} {perms} 00000000 08:01 1 {name}\nSize: 8 kB\nRss: 8 kB\n"
                f"Anonymous: {anonymous} kB\nLocked: {locked} kB\nVmFlags: rd mr\n")

    rows = [
        ("7f0000000000-7f0000001000", "r--p", lib, 0),   # headers and read-only data: listed
        ("7f0000001000-7f0000004000", "r-xp", lib, 0),   # code: listed
        ("7f0000004000-7f0000005000", "r--p", lib, 4),   # RELRO, relocated: kept
        ("7f0000005000-7f0000006000", "rw-p", lib, 4),   # .data: kept (and marks lib as loaded)
        ("7f0000007000-7f0000008000", "r--p", loading, 0),  # no relocated page yet: still loading
        ("7f0000008000-7f0000009000", "r-xp", loading, 0),
        ("7f0000009000-7f000000a000", "r--p", data, 0),  # not a shared library
        ("7f000000a000-7f000000b000", "rw-p", data, 4),
    ]
    smaps = tmp_path / "smaps"
    smaps.write_text("".join(entry(*row) for row in rows)
                     + entry("7f000000b000-7f000000c000", "r-xp", lib, 0, locked=4), encoding="utf-8")
    maps = tmp_path / "maps"
    listed = rows + [("7f000000b000-7f000000c000", "r-xp", lib, 0)]
    maps.write_text("".join(f"{span} {perms} 00000000 08:01 1 {name}\n" for span, perms, name, _ in listed),
                    encoding="utf-8")
    assert library_mappings(str(smaps), str(maps)) == [(0x7F0000000000, 0x7F0000001000),
                                                       (0x7F0000001000, 0x7F0000004000)]
    # a span whose permissions changed since smaps was read is left alone
    maps.write_text(maps.read_text(encoding="utf-8").replace("7f0000001000-7f0000004000 r-xp",
                                                             "7f0000001000-7f0000004000 rw-p"), encoding="utf-8")
    assert library_mappings(str(smaps), str(maps)) == [(0x7F0000000000, 0x7F0000001000)]
    assert library_mappings(str(smaps), str(tmp_path / "no-maps")) == []
    assert library_mappings(str(tmp_path / "no-smaps"), str(maps)) == []


@live
def test_releasing_the_libraries_pages_lowers_rss_and_their_code_still_runs() -> None:
    import hashlib
    import json
    import zlib

    payload = json.dumps({"rows": list(range(2000))}).encode("utf-8")
    digest = hashlib.sha256(payload).hexdigest()
    packed = zlib.compress(payload)
    spans = library_mappings()
    assert spans, "a CPython process maps shared libraries"
    assert release_library_pages() > 0
    assert hashlib.sha256(payload).hexdigest() == digest  # faulted back from the files
    assert zlib.decompress(packed) == payload
    assert json.loads(payload)["rows"][-1] == 1999


def test_smaps_of_an_emulator_does_not_describe_the_program(tmp_path: Path) -> None:
    """qemu-user: `maps` is the program's, `smaps` the emulator's (its own executable listed);
    such a process advises nothing. The same files in both (or a file only `maps` lists, mapped
    between the reads) describe the program; an unreadable file never does."""
    from iii_directory.encoder.mapped_pages import describes_this_program

    program = ("00400000-00500000 r-xp 00000000 08:01 11 /usr/bin/python3.11\n"
               "b6e00000-b6f00000 r-xp 00000000 08:01 12 /usr/lib/libc.so.6\n"
               "b7000000-b7001000 rw-p 00000000 00:00 0 \n")
    smaps_own = tmp_path / "smaps_own"
    smaps_own.write_text(program + "Rss:                   4 kB\n", encoding="utf-8")
    smaps_emulator = tmp_path / "smaps_emulator"
    smaps_emulator.write_text(
        "55d000000000-55d000400000 r-xp 00000000 08:01 99 /usr/libexec/qemu-binfmt/arm-binfmt-P\n" + program,
        encoding="utf-8")
    maps = tmp_path / "maps"
    maps.write_text(program + "b7100000-b7200000 r--p 00000000 08:01 13 /tmp/new.bin\n", encoding="utf-8")

    assert describes_this_program(str(smaps_own), str(maps))
    assert not describes_this_program(str(smaps_emulator), str(maps))
    assert not describes_this_program(str(tmp_path / "missing"), str(maps))
