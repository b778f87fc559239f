#!/usr/bin/env bash
# Verifies here what can be verified of the seven-target wheels (issue 10):
#  1. cibuildwheel lists exactly the expected identifiers per platform (wheels.toml);
#  2. `python -m build` makes the sdist and the native abi3 wheel; auditwheel accepts it;
#  3. the wheel installs into clean venvs: without the dense extra (lexical search) and with it
#     (hybrid search); a BM25-only build (IIIDIR_LANES=lexical, as musl/armv7 wheels are built)
#     declares no onnxruntime/numpy/hnswlib and still installs `[dense]`;
#  4. the sdist installs and passes the smoke test on Python 3.12 and 3.13;
#  5. the `_rank` and search unit tests pass with RANK_IMPLEMENTATION=python and with onnxruntime
#     absent (the latter also the distribution checks and the search/shell wire tests);
#  6. `[dense]` resolves to binary wheels alone on the other dense targets (aarch64 glibc, macOS
#     arm64, Windows x86_64 and arm64): `pip download --only-binary=:all: --platform …`.
#  (3c also checks that the BM25-only wheel ships the static table and `_rank.static` loads and
#  encodes there without numpy — issue 19.)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV_PY=${VENV_PY:-$ROOT/.venv/bin/python}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
say() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

say "1. build identifiers"
check_ids() {
  local platform=$1 expected=$2 got
  got=$("$VENV_PY" -m cibuildwheel --print-build-identifiers --platform "$platform" --archs all \
        --config-file wheels.toml . 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$expected" ] || fail "$platform identifiers: got [$got], expected [$expected]"
  echo "$platform: $got"
}
check_ids linux "cp311-manylinux_aarch64 cp311-manylinux_armv7l cp311-manylinux_x86_64 cp311-musllinux_x86_64"
check_ids macos "cp311-macosx_arm64"
check_ids windows "cp311-win_amd64 cp311-win_arm64"

say "2. sdist and native wheel"
"$VENV_PY" -m build --sdist --wheel --outdir "$WORK/dist" . >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; fail "python -m build"; }
WHEEL=$(ls "$WORK"/dist/*.whl)
SDIST=$(ls "$WORK"/dist/*.tar.gz)
echo "$(basename "$WHEEL")  $(basename "$SDIST")"
case "$WHEEL" in *-cp311-abi3-*) ;; *) fail "wheel is not a cp311 abi3 wheel: $WHEEL";; esac
tar -tzf "$SDIST" > "$WORK/sdist.txt"
grep -q 'src/_rank/_core.pyx$' "$WORK/sdist.txt" || fail "sdist lacks _core.pyx"
grep -q 'ui/dist/page.js$' "$WORK/sdist.txt" || fail "sdist lacks the console assets"
# the generated data files (`python -m iii_directory.schemas --write`): without them `serve` and
# `call` still work, but generate every schema and build the settings model (slower, not wrong)
for generated in schemas.json settings.json; do
  grep -q "src/iii_directory/data/$generated\$" "$WORK/sdist.txt" || fail "sdist lacks data/$generated"
  "$VENV_PY" -c "import sys, zipfile; sys.exit('iii_directory/data/' + sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist())" \
    "$WHEEL" "$generated" || fail "wheel lacks data/$generated"
done
"$VENV_PY" -m auditwheel show "$WHEEL" || fail "auditwheel show"
# Release builds link _rank._core without symbols (setup.py strip_wanted): 591 KB -> 108 KB.
"$VENV_PY" - "$WHEEL" <<'PY' || fail "the wheel's _rank._core is not stripped"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    (core,) = [n for n in wheel.namelist() if n.startswith("_rank/_core") and n.endswith((".so", ".pyd"))]
    data = wheel.read(core)
left = [name for name in (b".symtab", b".debug_info") if name in data]
print(f"{core}: {len(data):,} bytes, symbol sections left: {left or 'none'}")
sys.exit(1 if left or len(data) > 250_000 else 0)
PY

CATALOG="$ROOT/tests/data/smoke_catalog.json"
smoke() {  # smoke <venv> <expected search_mode>
  local venv=$1 mode=$2 out
  out=$(cd "$WORK" && "$venv/bin/iii-directory" call directory::search_functions \
        '{"capabilities": ["send an email to a customer"]}' --catalog "$CATALOG" 2>"$WORK/smoke.err") \
    || { cat "$WORK/smoke.err"; fail "smoke call in $venv"; }
  echo "$out" | "$venv/bin/python" -c "
import json, sys
r = json.load(sys.stdin)
ids = [f['function_id'] for w in r['workers'] for f in w['functions']]
assert r['search_mode'] == '$mode', r['search_mode']
assert 'email::send' in ids, ids
print('search_mode', r['search_mode'], 'top', ids[:3])
" || fail "smoke result in $venv"
}

say "3a. wheel without the dense extra: lexical"
python3 -m venv "$WORK/lex" && "$WORK/lex/bin/pip" install -q "$WHEEL"
"$WORK/lex/bin/python" -c "import importlib.util as u, sys; sys.exit(1 if u.find_spec('onnxruntime') or u.find_spec('numpy') else 0)" \
  || fail "base install pulled numpy/onnxruntime"
"$WORK/lex/bin/python" -c "import _rank; a = _rank.available(); print(a); assert a['compiled']"
smoke "$WORK/lex" lexical

say "3b. wheel with the dense extra, binary wheels only (no compiler needed): hybrid"
python3 -m venv "$WORK/dense" && "$WORK/dense/bin/pip" install -q --only-binary=:all: "$WHEEL[dense]" \
  || fail "[dense] does not install from binary wheels alone"
"$WORK/dense/bin/python" -c "import importlib.util as u, sys; sys.exit(1 if u.find_spec('hnswlib') else 0)" \
  || fail "[dense] pulled hnswlib (it is the opt-in 'hnsw' extra)"
smoke "$WORK/dense" hybrid

say "3c. BM25-only build (musl/armv7 metadata)"
IIIDIR_LANES=lexical "$VENV_PY" -m build --wheel --outdir "$WORK/lexdist" . >"$WORK/build2.log" 2>&1 || { tail -40 "$WORK/build2.log"; fail "lexical build"; }
LEXWHEEL=$(ls "$WORK"/lexdist/*.whl)
"$VENV_PY" - "$LEXWHEEL" <<'PY' || fail "BM25-only wheel declares dense packages"
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    text = wheel.read(meta).decode()
# The `test` extra may carry hnswlib (CI tests HNSW); what a BM25-only host installs may not.
heavy = [l for l in text.splitlines() if re.match(r"Requires-Dist: (onnxruntime|numpy|hnswlib)", l)
         and 'extra == "test"' not in l]
print("BM25-only wheel requirements:", [l for l in text.splitlines() if l.startswith("Requires-Dist")][:3], "...")
sys.exit(1 if heavy else 0)
PY
python3 -m venv "$WORK/lexonly" && "$WORK/lexonly/bin/pip" install -q "$LEXWHEEL[dense]"
smoke "$WORK/lexonly" lexical
n=$(grep -c 'dense lane unavailable' "$WORK/smoke.err" || true)
[ "$n" = 1 ] || fail "expected one log line saying why search is lexical-only, got $n"
grep 'dense lane unavailable' "$WORK/smoke.err"
# issue 19: the BM25-only wheel ships the static table, and _rank.static loads and encodes there
"$VENV_PY" -c "import sys, zipfile; sys.exit('_rank/data/static/minilm-static-256.bin' not in zipfile.ZipFile(sys.argv[1]).namelist())" "$LEXWHEEL" \
  || fail "BM25-only wheel lacks the static table"
"$WORK/lexonly/bin/python" -c "
import sys; sys.modules['numpy'] = None; sys.modules['onnxruntime'] = None
import _rank, _rank.static as s
assert _rank.available()['static'], _rank.available()
v = s.default_encoder().encode(['send an email to a customer'])[0]
assert len(v) == 256 and abs(sum(x * x for x in v) - 1.0) < 1e-4
print('static lane:', s.IMPLEMENTATION, 'kernels,', len(v), 'dims')
" || fail "_rank.static on the BM25-only wheel"
grep -q 'static lane in use' "$WORK/smoke.err" || fail "the BM25-only smoke run did not log the static lane"

for v in 3.12 3.13; do
  say "4. sdist on Python $v"
  PYV=$(ls -d /root/.pyenv/versions/$v.*/bin/python3 2>/dev/null | head -1 || true)
  PYV=${PYV:-$(command -v python$v || true)}
  [ -n "$PYV" ] || fail "no Python $v on this machine"
  "$PYV" -m venv "$WORK/py$v" && "$WORK/py$v/bin/pip" install -q "$SDIST"
  "$WORK/py$v/bin/python" -c "import _rank; assert _rank.available()['compiled']"
  smoke "$WORK/py$v" lexical
done

# 5a/5b run a selected part of the unit suite, not all of it again (issue 20: room in .ci/run for
# the emulated ARM stage; together they were ~1,900 tests twice, now ~1,300 tests in all). The
# README command has just run the whole suite with the compiled core and the dense extra; what
# these two runs add is narrower. The plain-Python `_rank` changes only what `_rank` and search
# compute, so 5a runs the `_rank` and search folders (their dense tests too: the dense lane's
# scores go through `_rank`). A venv without onnxruntime changes which search lanes exist and
# tests the installed wheel rather than the source tree, so 5b runs the `rank or portable` tests
# of those folders, the distribution-file checks and the search and shell wire tests (the
# installed worker served through the engine protocol, lexical only) there.
say "5a. _rank and search unit tests with RANK_IMPLEMENTATION=python"
RANK_IMPLEMENTATION=python "$VENV_PY" -m pytest -q -p no:cacheprovider -x tests/unit/rank tests/unit/search
say "5b. _rank, search, distribution and wire search/shell tests with onnxruntime absent (the lexical wheel venv)"
"$WORK/lex/bin/pip" install -q "$WHEEL[test]"
(cd "$ROOT" && "$WORK/lex/bin/python" -m pytest -q -p no:cacheprovider -x -m "(rank or portable or wire) and not dense" \
   tests/unit/rank tests/unit/search tests/unit/test_distribution_files.py tests/wire/test_search.py tests/wire/test_shell_smoke.py)
say "6. [dense] from binary wheels alone on the other dense targets"
# The requirements come from the wheel's metadata (setup.py DENSE + pyproject dependencies), so
# they are written down once. pip expands a macOS tag to older ones itself, but not manylinux_2_x
# tags: aarch64 lists every glibc tag up to 2.28 (the manylinux_2_28 image the wheel is built in).
"$VENV_PY" - "$WHEEL" > "$WORK/dense-reqs.txt" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    text = wheel.read(meta).decode()
for line in text.splitlines():
    if line.startswith("Requires-Dist: "):
        requirement, _, marker = line[len("Requires-Dist: "):].partition(";")
        if marker.strip() in ("", 'extra == "dense"'):
            print(requirement.strip())
PY
grep -q '^onnxruntime' "$WORK/dense-reqs.txt" || fail "no onnxruntime among the [dense] requirements"
AARCH64_TAGS=$(for v in $(seq 17 28); do printf -- '--platform manylinux_2_%s_aarch64 ' "$v"; done)
dense_download() {  # dense_download <name> <python version> <platform flags...>
  local name=$1 pyv=$2 abi
  shift 2
  abi=cp${pyv/./}
  "$WORK/dense/bin/pip" download -q --only-binary=:all: --python-version "$pyv" --implementation cp --abi "$abi" \
      "$@" -d "$WORK/dl-$name" -r "$WORK/dense-reqs.txt" >"$WORK/dl-$name.log" 2>&1 \
    || { grep -v '^WARNING' "$WORK/dl-$name.log" | tail -20; fail "[dense] has no binary wheels for $name"; }
  echo "$name (CPython $pyv): $(ls "$WORK/dl-$name" | grep -E '^(onnxruntime|numpy|tokenizers)-' | tr '\n' ' ')"
}
# shellcheck disable=SC2086
dense_download manylinux-aarch64 3.11 $AARCH64_TAGS
dense_download macos-11-arm64 3.11 --platform macosx_11_0_arm64    # oldest macOS the wheel targets
dense_download macos-14-arm64 3.11 --platform macosx_14_0_arm64    # newest onnxruntime wheels
dense_download win-amd64 3.11 --platform win_amd64
# Windows ARM64 needs CPython 3.12+: PyYAML (a base dependency, and one of tokenizers' through
# huggingface-hub) publishes win_arm64 wheels for cp312 and later only. The cp311 abi3 wheel
# serves 3.12+, so the target is the same wheel; only its Python floor differs.
dense_download win-arm64 3.12 --platform win_arm64

say "wheels: all checks passed"
