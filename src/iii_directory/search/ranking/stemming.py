"""The Snowball English stemmer, imported without the other languages' stemmers.

`import snowballstemmer` runs the package's `__init__`, which imports the stemmer module of every
one of its 34 languages (~22 ms on a 2-core host) to fill its language table. The English stemmer
needs three of its modules (`english_stemmer`, `basestemmer`, `among`). Rule:

* snowballstemmer already imported, or PyStemmer (`Stemmer`, which the package prefers when it is
  installed) present: `snowballstemmer.stemmer("english")`, exactly as the package chooses;
* else the three modules are imported under the package's name with the package's `__init__` not
  run (a bare package module stands in while they import, then leaves `sys.modules`), so a later
  `import snowballstemmer` runs its `__init__` and reuses the same three modules.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

PACKAGE = "snowballstemmer"


def english_stemmer() -> Any | None:
    """An object with `stemWord(str) -> str` stemming English, or None without snowballstemmer."""
    if PACKAGE in sys.modules or importlib.util.find_spec("Stemmer") is not None:
        return _through_package()
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.submodule_search_locations is None:
        return None
    stand_in = importlib.util.module_from_spec(spec)  # the package, its __init__ not executed
    sys.modules[PACKAGE] = stand_in
    try:
        module = importlib.import_module(f"{PACKAGE}.english_stemmer")
    except ImportError:
        return None
    finally:
        if sys.modules.get(PACKAGE) is stand_in:
            del sys.modules[PACKAGE]
    return module.EnglishStemmer()


def _through_package() -> Any | None:
    try:
        import snowballstemmer
    except ImportError:
        return None
    return snowballstemmer.stemmer("english")
