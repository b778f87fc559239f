"""Learned static rows (issue 19, fifth round): fit the word-piece rows themselves so that a
sentence's static vector predicts MiniLM's sentence embedding of the same sentence.

The static vector of a sentence `s` is the SIF-weighted mean of its pieces' rows,
`A_s E` with `A_s[i] = Σ_{t∈s, id_t = i} w_t / Σ_{t∈s} w_t`. The rows solve

    min_E  Σ_s ‖A_s E − T_s‖²  +  λ ‖E − E0‖²

(`T_s` MiniLM's unit sentence embedding, `E0` the prior rows), i.e. per piece seen in the corpus
`(AᵀA + λI) E = AᵀT + λ E0`; pieces the corpus never uses keep `E0`. The system is dense over
the pieces the corpus uses (about 8,000) and solved by LU in float64 on one BLAS thread, so a
rebuild gives the same bits. `E0` is the isolated piece rows (step 1 of `build_static_table.py`), centred,
mapped into the teacher's space by the ridge fit `W` of `A C W ≈ T` (`C` the centred rows).

The rows go through the recipe's SIF weight and int8 (optionally a projection to fewer dims).
"""

from __future__ import annotations

import ast
import hashlib
import re
import sysconfig
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
STDLIB_SKIP = {"test", "tests", "idlelib", "site-packages", "lib2to3", "turtledemo"}
MAX_PIECES = 126  # the teacher truncates at 128 tokens with [CLS] and [SEP]


def sentences(text: str, shortest: int = 3) -> list[str]:
    """Sentences of `shortest`-60 words, at least half of them alphabetic, whitespace folded."""
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n\s*\n", text):
        words = sentence.split()
        if shortest <= len(words) <= 60 and sum(w.isalpha() for w in words) >= len(words) // 2:
            out.append(" ".join(words))
    return out


def docstrings(root: Path, skip: set[str], shortest: int = 3) -> set[str]:
    """Sentences (`sentences`) of the module, class and function docstrings of every `*.py`
    under `root`, files under a folder named in `skip` left out."""
    found: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        if set(path.relative_to(root).parts) & skip:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    found.update(sentences(doc, shortest))
    return found


def corpus(site_packages: Path | None = None, limit: int = 25_000) -> list[str]:
    """The fit's sentences, none from an eval catalog or case set: the standard library's
    docstrings (tests, IDLE, lib2to3, turtledemo excluded), the seeds and specs of
    `../shared/seeds` and `../shared/spec` and our `skills/` (code blocks dropped), sorted by
    SHA-1; with `site_packages`, up to `limit` more sentences of the docstrings found there
    (tests and vendored copies excluded, our own package too)."""
    found = docstrings(STDLIB, STDLIB_SKIP)
    files = [*sorted((SHARED / "seeds").glob("*.txt")), *sorted((SHARED / "spec").glob("*.md")),
             *sorted((ROOT / "skills").rglob("*.md"))]
    for path in files:
        text = re.sub(r"```.*?```", " ", path.read_text(encoding="utf-8"), flags=re.S)
        for paragraph in text.split("\n\n"):
            found.update(sentences(re.sub(r"[#>|*`_-]+", " ", paragraph)))
    key = lambda s: hashlib.sha1(s.encode()).hexdigest()  # noqa: E731
    ordered = sorted(found, key=key)
    if site_packages is not None:
        more = docstrings(site_packages, {"test", "tests", "testing", "_vendor", "vendor",
                                          "iii_directory", "__pycache__"}) - found
        ordered += sorted((s for s in more if len(s.split()) >= 5), key=key)[:limit]
    return ordered


def teacher(texts: list[str], cache_dir: Path = Path("/tmp"), cache: Path | None = None) -> np.ndarray:
    """MiniLM's sentence embeddings of `texts` (`_rank.dense.Encoder`, the `dense` extra),
    cached by the SHA-256 of the texts."""
    if cache is None:
        digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
        cache = cache_dir / f"static-learned-teacher-{digest}.npy"
    if cache.is_file():
        return np.load(cache)
    from _rank.dense import Encoder

    encoder = Encoder()
    out = np.concatenate([np.asarray(encoder.encode(texts[i:i + 256]), dtype=np.float32)
                          for i in range(0, len(texts), 256)])
    np.save(cache, out)
    return out


def sentence_weights(ids_list: list[list[int]], weights: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per sentence: (unique piece ids, their share of the sentence's SIF weight)."""
    out = []
    for ids in ids_list:
        if not ids:
            out.append((np.zeros(0, dtype=np.int64), np.zeros(0)))
            continue
        arr = np.asarray(ids, dtype=np.int64)
        w = weights[arr]
        total = w.sum()
        if total <= 0:
            out.append((np.zeros(0, dtype=np.int64), np.zeros(0)))
            continue
        uniq, inverse = np.unique(arr, return_inverse=True)
        share = np.bincount(inverse, weights=w / total, minlength=len(uniq))
        keep = share > 0
        out.append((uniq[keep], share[keep]))
    return out


def prior_rows(raw: np.ndarray, rows_of: list[tuple[np.ndarray, np.ndarray]], target: np.ndarray,
               ridge: float) -> np.ndarray:
    """`E0 = C W`: the centred isolated rows mapped by the ridge fit of `A C W ≈ T`."""
    centred = raw.astype(np.float64) - raw.astype(np.float64).mean(axis=0)
    x = np.stack([share @ centred[ids] if len(ids) else np.zeros(centred.shape[1])
                  for ids, share in rows_of])
    gram = x.T @ x
    scale = np.trace(gram) / gram.shape[0]
    w = np.linalg.solve(gram + ridge * scale * np.eye(gram.shape[0]), x.T @ target)
    return centred @ w


def fit_rows(prior: np.ndarray, rows_of: list[tuple[np.ndarray, np.ndarray]], target: np.ndarray,
             lam: float) -> np.ndarray:
    """Solve `(AᵀA + λI) E = AᵀT + λ E0` over the pieces the sentences use; others keep `E0`."""
    seen = np.unique(np.concatenate([ids for ids, _ in rows_of if len(ids)]))
    index = np.full(prior.shape[0], -1, dtype=np.int64)
    index[seen] = np.arange(len(seen))
    n = len(seen)
    keys, values = [], []
    rhs = lam * prior[seen].astype(np.float64)
    for (ids, share), t in zip(rows_of, target):
        if not len(ids):
            continue
        local = index[ids]
        keys.append((local[:, None] * n + local[None, :]).ravel())
        values.append(np.outer(share, share).ravel())
        rhs[local] += share[:, None] * t[None, :]
    gram = np.bincount(np.concatenate(keys), weights=np.concatenate(values), minlength=n * n)
    gram = gram.reshape(n, n)
    gram[np.diag_indices(n)] += lam
    out = prior.astype(np.float64).copy()
    out[seen] = np.linalg.solve(gram, rhs)
    return out


def project(rows: np.ndarray, dims: int | None, centre: bool) -> np.ndarray:
    """Optionally centre, then keep the first `dims` principal axes (signs as the recipe's)."""
    x = rows - rows.mean(axis=0) if centre else rows
    if dims is None:
        return x
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    components = vt[:dims]
    pivots = np.argmax(np.abs(components), axis=1)
    signs = np.sign(components[np.arange(dims), pivots])
    return x @ (components * signs[:, None]).T


def learned_rows(raw: np.ndarray, pieces: list[str], texts: list[str], target: np.ndarray,
                 lam: float, sif_a: float, ridge: float = 1e-3) -> np.ndarray:
    """The fitted rows (before the SIF weight): `E0` from `raw` by the ridge map, then the fit."""
    import build_static_table as recipe

    from _rank import static

    tokenizer = static.WordPiece.load()
    rows_of = sentence_weights([tokenizer.ids(t)[:MAX_PIECES] for t in texts],
                               recipe.sif_weights(pieces, sif_a))
    target = np.asarray(target, dtype=np.float64)
    prior = prior_rows(raw, rows_of, target, ridge)
    return fit_rows(prior, rows_of, target, lam)


def learned_table(raw: np.ndarray, pieces: list[str], lam: float, sif_a: float,
                  dims: int | None = 256, site_packages: Path | None = None) -> bytes:
    """A table of learned rows: fit, centre, PCA to `dims` (None: 384), SIF weight, int8."""
    import build_static_table as recipe

    texts = corpus(site_packages)
    rows = learned_rows(raw, pieces, texts, teacher(texts), lam, sif_a)
    weighted = project(rows, dims, centre=True) * recipe.sif_weights(pieces, sif_a)[:, None]
    q, scales = recipe.quantise(weighted)
    return recipe.encode_table(q, scales, recipe.FLAG_WEIGHTED | recipe.FLAG_CENTRED)
