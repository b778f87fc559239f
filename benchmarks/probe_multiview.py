"""Probe: do multi-view dense features help the learned fusion? (issue 18; the four view features
of the `views` group ship, `search/views.py`)

    cd benchmarks && python probe_multiview.py [--eval-dir ../../shared/eval] [--group NAME ...] \
        [--l2 X] [--steps N]

Each function is embedded as more than the one view the dense lane indexes (`Tool.dense_text`,
id + slim description):

| view | text |
|---|---|
| `desc` | the slim description alone (the id when it has none) |
| `act` | the id's words as a phrase, last segment first: `hr::time-off::request` → "request time off hr" |

and each request as its `dense_query` text and as its *content words* (`content`: the words of
that text that are not in `STOPWORDS`). Candidate features added to the thirteen of
`fusion.FEATURES` (the candidates stay the lane's: dense top 20 ∪ BM25 top 20):
`cos_desc`, `cos_act` (the request against those views), `cos_content` (the content words
against the indexed view), `view_max` and `view_mean` (max / mean of the indexed view's,
`desc`'s and `act`'s cosines); controls: `cos-copies` (four more columns that all hold `cos`: no
new information, it shows what the L2-regularised fit gains from weighing the encoder more) and
`evidence` (each candidate's content-term count and IDF-weighted coverage, as
`answerability.evidence_leads` computes them). `--l2` / `--steps` change the fit's
regularisation. The same cross-checks as `fit_fusion.py --heldout` are printed
for each feature group: each eval-catalog set scored with weights fitted on the other two, the
held-out catalog with weights fitted on the eval catalog's sets, and back (lane level: share of
capabilities whose first candidate is relevant, share of relevant functions in the first 12).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import numpy as np

from fit_fusion import print_groups, probe_sets
from iii_directory.search.corpus import Corpus
from iii_directory.search.fusion import FEATURES, Request, features
from iii_directory.search.lanes import lexical_ranking
from iii_directory.search.query import make_query
from iii_directory.search.views import action_view

DENSE_K = 64
EXTRA = ("cos_desc", "cos_act", "cos_content", "view_max", "view_mean", "cand_content",
         "cand_coverage", "cos_copy1", "cos_copy2", "cos_copy3", "cos_copy4")
COPIES = ("cos_copy1", "cos_copy2", "cos_copy3", "cos_copy4")
GROUPS: dict[str, tuple[str, ...]] = {
    "none": (),
    "desc": ("cos_desc",),
    "act": ("cos_act",),
    "content": ("cos_content",),
    "max+mean": ("view_max", "view_mean"),
    "views": ("cos_desc", "cos_act", "view_max", "view_mean"),
    "all": EXTRA,
    "evidence": ("cand_content", "cand_coverage"),
    "cos-copies": COPIES,
    "views+evidence": ("cos_desc", "cos_act", "view_max", "view_mean", "cand_content",
                       "cand_coverage"),
}
STOPWORDS = frozenset(
    "a an the this that these those my our your their his her its me us i we you it is are was "
    "were be been do does did can could would should will shall may might must please to of in on "
    "at by for from with into onto about as and or but if then so up out all any some every each "
    "what which who whom whose when where why how there here just now also".split())
WORD = re.compile(r"[A-Za-z][A-Za-z0-9'_-]*")


def content_words(text: str) -> str:
    """The words of a request that are not stop words (the whole text when none are left)."""
    kept = [w for w in WORD.findall(text) if w.lower() not in STOPWORDS]
    return " ".join(kept) or text


def candidate_evidence(corpus: Corpus, query: Any, doc_id: str) -> tuple[float, float]:
    """The answerability decision's lexical evidence (`answerability.evidence_leads`) for one
    candidate: content terms it matches (1 named by its id, 0.5 by its description; capped at
    3) and the IDF-weighted coverage of the request's informative terms."""
    from iii_directory.search import answerability as a

    documents = corpus.documents
    stats = a.catalog_stats(documents)
    ordinary = a.ordinary_terms(query.text)
    wanted = [t for t in dict.fromkeys(a.query_terms(query.terms)) if t not in ordinary]
    if not wanted:
        return 0.0, 0.0
    verb = a.leading_verb(query.terms)
    weights = {t: stats.idf(t) for t in wanted}
    held = documents.term_sets[documents.positions[doc_id]]
    matched = [t for t in wanted if t in held]
    named = a._id_terms(doc_id)
    content = sum(0.0 if t in a.VERBS else 1.0 if t in named else a.DESCRIPTION_WEIGHT
                  for t in matched if t != verb)
    return min(content, 3.0), sum(weights[t] for t in matched) / (sum(weights.values()) or 1.0)


def unit(encoder: Any, texts: list[str]) -> np.ndarray:
    return np.asarray(encoder.encode(texts), dtype=np.float32)


def samples(corpus: Corpus, encoder: Any, graded: list[tuple[str, dict[str, int]]]) -> list[Any]:
    ids = [tool.name for tool in corpus.tools]
    position = {name: i for i, name in enumerate(ids)}
    main_view = unit(encoder, [tool.dense_text for tool in corpus.tools])
    desc_view = unit(encoder, [tool.description or tool.name for tool in corpus.tools])
    act_view = unit(encoder, [action_view(tool.name) for tool in corpus.tools])
    out = []
    for capability, grades in graded:
        query = make_query(capability)
        if query is None:
            continue
        vector = unit(encoder, [query.dense_text])[0]
        content = unit(encoder, [content_words(query.dense_text)])[0]
        cosines = main_view @ vector
        order = sorted(range(len(ids)), key=lambda i: (-float(cosines[i]), ids[i]))[:DENSE_K]
        dense = [(ids[i], float(cosines[i])) for i in order]
        names, rows = features(Request.of(query.terms), corpus.documents,
                               lexical_ranking(corpus.documents, query.terms), dense,
                               corpus.descriptions.__getitem__)
        at = [position[name] for name in names]
        main = np.asarray(rows, dtype=np.float64)[:, FEATURES.index("cos")]
        desc = desc_view[at] @ vector
        act = act_view[at] @ vector
        views = np.column_stack([main, desc, act])
        evidence = np.asarray([candidate_evidence(corpus, query, name) for name in names])
        base = np.asarray(rows, dtype=np.float64)[:, :len(FEATURES)]
        extra = np.column_stack([desc, act, main_view[at] @ content, views.max(1), views.mean(1),
                                 evidence] + [main] * len(COPIES))
        out.append((names, np.column_stack([base, extra]), grades))
    return out


def pick(data: list[Any], columns: tuple[str, ...]) -> list[Any]:
    keep = list(range(len(FEATURES))) + [len(FEATURES) + EXTRA.index(c) for c in columns]
    return [(names, rows[:, keep], grades) for names, rows, grades in data]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=Path("../shared/eval"))
    parser.add_argument("--group", action="append", choices=tuple(GROUPS))
    parser.add_argument("--l2", type=float, help="fit_fusion's L2 (default 0.01)")
    parser.add_argument("--steps", type=int, help="fit_fusion's gradient steps (default 300)")
    args = parser.parse_args()
    import fit_fusion

    if args.l2 is not None:
        fit_fusion.L2 = args.l2
    if args.steps is not None:
        fit_fusion.STEPS = args.steps
    from _rank import dense

    encoder = dense.Encoder()
    sets, heldout = probe_sets(args.eval_dir,
                               lambda corpus, graded: samples(corpus, encoder, graded))
    print_groups(GROUPS, args.group or list(GROUPS), sets, heldout, pick, len(FEATURES))

if __name__ == "__main__":
    main()
