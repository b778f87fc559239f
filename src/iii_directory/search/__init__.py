"""Function search (docs/rules/search.md): the catalog corpus, ranking lanes, selection, the registry and
side lanes, the judge, session memory and guidance. `SearchService` in `service.py` runs it."""
