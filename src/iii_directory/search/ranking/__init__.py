"""The ranking core of function search: pure, synchronous stages over an in-memory catalog
(docs/search.md, "The pipeline").

A capability becomes a `query.Query` (text, vocabulary, stemming, second query); lanes rank the
catalog's `corpus.DocumentSet` for it (lanes: BM25, exact ids, hybrid fusion with given dense
rankings; static_fusion: the static lane's rule); fusion learns the order below the first place;
answerability and confidence decide whether and how well a lane answers; needs splits a request
naming several needs; select spends the result budget across lanes. The fitted weights and word
lists these stages read live in `data/` (fitted.py, word_lists.py).

Nothing here awaits, starts a thread or imports anyio or the encoder: every input (dense
rankings, view cosines, static rankings) is handed in by the orchestration one level up
(`iii_directory.search`), so each stage is testable with plain values
(tests/unit/search/test_ranking_core.py holds this).
"""
