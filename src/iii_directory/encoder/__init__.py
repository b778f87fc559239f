"""The MiniLM encoder and what keeps it fed and small (docs/search.md, "The dense lane"; docs/operations.md).

`dense_lane.DenseLane` owns the encoder's lifecycle, the document index of the active catalog and
ad-hoc embeddings, and ranks by cosine; every text reaches the encoder through
`encoding.EncoderPipeline` (single flight per text, micro-batches, priorities, encoder threads);
`vector_cache` keeps vectors by content hash in memory and on disk; `mapped_pages` hands the
pages of files read once back to the kernel; `preload` and `preload_slot` build the encoder on
its own thread while `serve` registers. This is machinery: it returns the ranking core's
`Ranking` values (`iii_directory.search.ranking`) and holds no ranking policy; the search
orchestration (`iii_directory.search`) calls it.
"""
