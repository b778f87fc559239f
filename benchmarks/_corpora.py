"""Corpora and query sets for the `_rank` benchmarks (kept out of the timed code)."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

import _rank

EVAL_DIR = Path("/work/shared/eval")
CATALOG = EVAL_DIR / "catalog.json"
CASES = EVAL_DIR / "cases.json"

#: the hand boost of search.md §3.4 for `browser::fetch`
_FETCH_BOOST = "default static web page webpage website RSS Atom API content scrape scraping"


@dataclass(frozen=True)
class Corpus:
    """Pre-tokenized documents plus the texts and term lists of the queries run against them."""

    name: str
    documents: list[list[str]]
    texts: list[str]
    queries: list[list[str]]
    query_texts: list[str]


def slim_description(description: str) -> str:
    """First line, cut after the first `.`, `?` or `!` followed by whitespace or the line end,
    trimmed, truncated to 160 UTF-8 bytes on a character boundary (search.md §3.4)."""
    line = description.split("\n", 1)[0]
    match = re.search(r"[.?!](?=\s|$)", line)
    if match:
        line = line[: match.end()]
    raw = line.rstrip().encode("utf-8")[:160]
    return raw.decode("utf-8", "ignore")


def bm25_document(function_id: str, description: str, keys: list[str]) -> str:
    """`"{name} {name} {searchable_text}"`, searchable text = name + slim description + keys."""
    searchable = f"{function_id} {slim_description(description)}" + "".join(f" {k}" for k in sorted(keys))
    text = f"{function_id} {function_id} {searchable}"
    if function_id == "browser::fetch":
        text += " " + _FETCH_BOOST
    return text


def catalog_corpus() -> Corpus | None:
    """The eval catalog (documents per search.md §3.4) and the eval capabilities as queries;
    None when the eval set is not on this machine."""
    if not CATALOG.is_file() or not CASES.is_file():
        return None
    records = json.loads(CATALOG.read_text())
    texts = [
        bm25_document(
            r["function_id"],
            r.get("description") or "",
            list((r.get("request_schema") or {}).get("properties") or {}),
        )
        for r in records
    ]
    cases = json.loads(CASES.read_text())["cases"]
    query_texts = [c for case in cases for c in case["capabilities"]]
    return Corpus(
        name="catalog",
        documents=[_rank.tokenize(t) for t in texts],
        texts=texts,
        queries=[_rank.tokenize_query(q) for q in query_texts],
        query_texts=query_texts,
    )


def synthetic_corpus(n_docs: int, n_queries: int = 100, seed: int = 7) -> Corpus:
    """Zipf-distributed vocabulary of 30,000 words; documents of 8 to 40 terms; queries of 2 to
    6 terms drawn from the same distribution (so frequent words make long postings lists)."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(30_000)]
    weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(vocabulary))]
    cumulative: list[float] = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)

    def draw(count: int) -> list[str]:
        return rng.choices(vocabulary, cum_weights=cumulative, k=count)

    documents = [draw(rng.randint(8, 40)) for _ in range(n_docs)]
    queries = [draw(rng.randint(2, 6)) for _ in range(n_queries)]
    return Corpus(
        name=f"synthetic-{n_docs // 1000}k",
        documents=documents,
        texts=[" ".join(d) for d in documents],
        queries=queries,
        query_texts=[" ".join(q) for q in queries],
    )


#: packages whose docstrings make the real-text corpus (all installed by the `test` and `dense`
#: extras); their versions are printed with every figure
DOCSTRING_PACKAGES = ("numpy", "hypothesis", "setuptools", "pip")


def docstring_corpus(n_queries: int = 200, seed: int = 7) -> Corpus:
    """Real English text that PyPI packages ship: every paragraph (5 words or more) of every
    docstring of the `DOCSTRING_PACKAGES`, tokenized by `_rank.tokenize`. Queries are the first
    sentence of paragraphs drawn at random, cut to 8 terms (natural wording, frequent words
    included); the paragraph itself stays in the corpus."""
    import ast
    import importlib

    texts: list[str] = []
    for name in DOCSTRING_PACKAGES:
        root = Path(importlib.import_module(name).__file__ or "").parent
        for path in sorted(root.rglob("*.py")):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    texts.extend(p for p in (doc or "").split("\n\n") if len(p.split()) >= 5)
    rng = random.Random(seed)
    query_texts: list[str] = []
    while len(query_texts) < n_queries:
        sentence = re.split(r"(?<=[.?!])\s", rng.choice(texts), maxsplit=1)[0]
        if _rank.tokenize_query(sentence):
            query_texts.append(sentence)
    return Corpus(
        name="docstrings",
        documents=[_rank.tokenize(t) for t in texts],
        texts=texts,
        queries=[_rank.tokenize_query(q)[:8] for q in query_texts],
        query_texts=query_texts,
    )


def package_versions() -> dict[str, str]:
    """Versions of the packages the docstring corpus reads."""
    from importlib.metadata import version

    return {name: version(name) for name in DOCSTRING_PACKAGES}
