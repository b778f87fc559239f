"""Atheris target: the engine frame decoder (`iii_directory.protocol.frames.decode`).

Any byte string, given as a binary frame and (when it decodes) as a text frame, must yield a
frame dict with a known `type`, `None` (empty frame) or `FrameError` — nothing else.

    python fuzz/fuzz_frames.py -atheris_runs=200000 [corpus_dir]
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from iii_directory.protocol import frames


def check(raw: str | bytes) -> None:
    try:
        frame = frames.decode(raw)
    except frames.FrameError:
        return
    if frame is not None and (not isinstance(frame, dict) or frame.get("type") not in frames.KNOWN_TYPES):
        raise AssertionError(f"decode returned {frame!r:.200}")


def test_one_input(data: bytes) -> None:
    check(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    check(text)


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
