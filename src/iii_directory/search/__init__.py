"""Function search (docs/rules/search.md; docs/search.md draws the pipeline): a
`directory::search_functions` call, from the live catalog to the response.

Three levels, each importing only the ones below it:
* `search.ranking` — the pure, synchronous ranking core: corpus, queries, lanes, fusion,
  answerability, confidence, needs, selection (its own `__init__` lists them);
* `iii_directory.encoder` — the MiniLM encoder machinery: dense lane, pipeline, vector caches,
  page release, preload;
* this package — the orchestration of a call: `service` (the `SearchService` a call runs
  through), `call` (what one call shares), `catalog` (the live catalog from the engine),
  `sliced_queries`, `static_lane`, `side_lanes`, `registry_lane`, `judge`, `rerank`, `slots`,
  `memory`, `guidance`, `response`, `request_limits`.

The public face — what other layers import (tests/unit/test_layering.py holds it): `service`,
`catalog`, `request_limits` (the request's size limits, published in the schema), and the
`ranking` core (the encoder returns its rankings; the bench and the fit scripts score with it).
Everything else here is internal to a call. Nothing is imported eagerly: importing the package
loads none of its modules.
"""

__all__ = ["catalog", "ranking", "request_limits", "service"]
