"""Atheris target: the frontmatter parser (`iii_directory.content.markdown`).

Any text must split into (frontmatter, body) and parse into a mapping, `None` (no block) or
`FrontmatterError` — never another exception, whatever the YAML (aliases, tags, nesting,
huge blocks). The title and first-paragraph helpers must accept every body.

    python fuzz/fuzz_frontmatter.py -atheris_runs=200000 [corpus_dir]
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from iii_directory.content import markdown


def test_one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    text = provider.ConsumeUnicodeNoSurrogates(len(data))
    if provider.ConsumeBool() if len(data) else False:
        text = "---\n" + text
    split = markdown.split_frontmatter(text)
    try:
        meta, body = markdown.parse_frontmatter(text)
    except markdown.FrontmatterError:
        meta, body = None, split.body
    if meta is not None and not isinstance(meta, dict):
        raise AssertionError(f"frontmatter is not a mapping: {type(meta)}")
    if body != split.body:
        raise AssertionError("parse_frontmatter and split_frontmatter disagree on the body")
    markdown.first_h1(body)
    markdown.first_paragraph(body)


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
