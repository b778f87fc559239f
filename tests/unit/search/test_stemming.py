"""The English stemmer is imported without the other languages' stemmers and stems exactly as
`snowballstemmer.stemmer("english")`; a later `import snowballstemmer` still works in full."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from iii_directory.search.ranking.vocabulary import stem, _STEMMER
before = sorted(m for m in sys.modules if m.startswith("snowballstemmer"))
words = ["running", "generalization", "connections", "happily", "skies", "emailing", "caresses",
         "meetings", "transcribed", "spreadsheets", "a", "go", "2024", "naïve"]
ours = [stem(w) for w in words]
import snowballstemmer
full = snowballstemmer.stemmer("english")
print(json.dumps({"before": before, "ours": ours, "full": [stem(w) if len(w) < 3 or not w.isalpha() else
                  full.stemWord(w) for w in words], "same_class": type(full) is type(_STEMMER),
                  "languages": len(snowballstemmer.algorithms()), "package": "snowballstemmer" in sys.modules}))
"""


def test_only_the_english_stemmer_is_imported_and_it_stems_as_the_package_does() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["before"] == ["snowballstemmer.among", "snowballstemmer.basestemmer",
                                "snowballstemmer.english_stemmer"]
    assert report["ours"] == report["full"]
    assert report["ours"][:3] == ["run", "general", "connect"]
    assert report["same_class"] and report["package"] and report["languages"] > 30
