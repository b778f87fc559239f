"""Probe: does late interaction (MaxSim over MiniLM token vectors) help the learned fusion?

    python benchmarks/probe_late_interaction.py [--eval-dir ../shared/eval]

An experiment, not shipped: it reads token vectors through the encoder's own ONNX session (the
shipped `_rank.dense.Encoder` only returns pooled vectors). For each candidate of a lane it adds
one feature, `maxsim = mean over request tokens of the best cosine to any function token`
(ColBERT-style, [CLS]/[SEP] left out), to the thirteen of `fusion.FEATURES`, and prints the
same cross-checks as `fit_fusion.py` with and without it: each eval-catalog set scored with
weights fitted on the other two, and the held-out catalog scored with weights fitted on the
eval catalog's sets (and back).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from fit_fusion import fit, graded_capabilities, load_corpus, quality
from iii_directory.search.fusion import Request, features
from iii_directory.search.lanes import lexical_ranking
from iii_directory.search.query import make_query

DENSE_K = 64


def token_vectors(encoder, texts: list[str]) -> list[np.ndarray]:
    """Unit token vectors (special tokens dropped) of each text."""
    out = []
    tokenizer, session = encoder._tokenizer, encoder._session
    for start in range(0, len(texts), 32):
        chunk = texts[start:start + 32]
        encodings = tokenizer.encode_batch(chunk)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = session.run([encoder._output], feeds)
        for row, encoding in enumerate(encodings):
            keep = [i for i, (m, special) in enumerate(zip(encoding.attention_mask,
                                                           encoding.special_tokens_mask))
                    if m and not special]
            vectors = hidden[row, keep].astype(np.float32)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
            out.append(vectors)
    return out


def samples(corpus, encoder, graded):
    ids = [tool.name for tool in corpus.tools]
    matrix = np.asarray(encoder.encode([tool.dense_text for tool in corpus.tools]), dtype=np.float32)
    doc_tokens = dict(zip(ids, token_vectors(encoder, [tool.dense_text for tool in corpus.tools])))
    out = []
    for capability, grades in graded:
        query = make_query(capability)
        if query is None:
            continue
        vector = np.asarray(encoder.encode([query.dense_text]), dtype=np.float32)[0]
        cosines = matrix @ vector
        order = sorted(range(len(ids)), key=lambda i: (-float(cosines[i]), ids[i]))[:DENSE_K]
        dense = [(ids[i], float(cosines[i])) for i in order]
        names, rows = features(Request.of(query.terms), corpus.documents,
                               lexical_ranking(corpus.documents, query.terms), dense,
                               corpus.descriptions.__getitem__)
        q_tokens = token_vectors(encoder, [query.dense_text])[0]
        maxsim = [float((q_tokens @ doc_tokens[name].T).max(axis=1).mean()) for name in names]
        rows = np.column_stack([np.asarray(rows, dtype=np.float64), maxsim])
        out.append((names, rows, grades))
    return out


def drop_last(data):
    return [(names, rows[:, :-1], grades) for names, rows, grades in data]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=Path("../shared/eval"))
    args = parser.parse_args()
    from _rank import dense

    encoder = dense.Encoder()
    data_dir = Path(__file__).parent / "data"
    corpus = load_corpus(args.eval_dir / "catalog.json")
    sets = {"dev": samples(corpus, encoder, graded_capabilities(args.eval_dir / "cases.json", "dev"))}
    for path in sorted(data_dir.glob("extra*_cases.json")):
        name = path.stem.replace("_cases", "")
        sets[name] = samples(corpus, encoder, graded_capabilities(path, name))
    heldout = samples(load_corpus(data_dir / "heldout_catalog.json"), encoder,
                      graded_capabilities(data_dir / "heldout_cases.json", None))
    for label, transform in (("without maxsim", drop_last), ("with maxsim", lambda d: d)):
        chosen = {name: transform(data) for name, data in sets.items()}
        held = transform(heldout)
        for name in chosen:
            weights = fit([s for other, d in chosen.items() if other != name for s in d])
            first, recall = quality(weights, chosen[name])
            print(f"{label:15s} fit on the others -> {name:7s} first {first:.3f}  recall@12 {recall:.3f}")
        weights = fit([s for d in chosen.values() for s in d])
        first, recall = quality(weights, held)
        print(f"{label:15s} fit on the eval catalog -> heldout first {first:.3f}  recall@12 {recall:.3f}"
              f"  (maxsim weight {weights[-1]:+.3f})" if label == "with maxsim" else
              f"{label:15s} fit on the eval catalog -> heldout first {first:.3f}  recall@12 {recall:.3f}")
        back = fit(held)
        for name, data in chosen.items():
            first, recall = quality(back, data)
            print(f"{label:15s} fit on heldout -> {name:7s} first {first:.3f}  recall@12 {recall:.3f}")


if __name__ == "__main__":
    main()
