"""_rank: BM25, reciprocal-rank fusion and the term pipeline (being built)."""
