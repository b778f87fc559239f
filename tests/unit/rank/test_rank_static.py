"""`_rank.static`: the table format, the WordPiece tokenizer against `tokenizers`, the encoder,
the index, and the compiled kernels against the plain-Python reference."""

from __future__ import annotations

import hashlib
import json
import math
import mmap
import os
import struct
import subprocess
import sys
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _rank import _assets, _static_reference, static

try:
    from _rank import _static as _compiled
except ImportError:  # the compiled kernels are optional
    _compiled = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[3]
EVAL = ROOT.parent / "shared" / "eval"
KERNELS = [pytest.param(_static_reference, id="python"),
           pytest.param(_compiled, id="cython",
                        marks=pytest.mark.skipif(_compiled is None, reason="_rank._static not built"))]


def _texts() -> list[str]:
    """Every text of the eval catalog and cases, our case sets and the smoke catalog."""
    texts: list[str] = []
    catalogs = [EVAL / "catalog.json", ROOT / "tests" / "data" / "smoke_catalog.json",
                ROOT / "benchmarks" / "data" / "heldout_catalog.json"]
    for path in catalogs:
        if path.is_file():
            for record in json.loads(path.read_text(encoding="utf-8")):
                texts.append(str(record.get("function_id") or record.get("name") or ""))
                texts.append(str(record.get("description") or ""))
                texts.append(json.dumps(record.get("request_schema") or {}))
    return texts + _capabilities()


def _capabilities() -> list[str]:
    """The capabilities of every case set: the eval's first, then ours."""
    found: list[str] = []
    for path in [EVAL / "cases.json", ROOT / "benchmarks" / "data" / "extra_cases.json",
                 ROOT / "benchmarks" / "data" / "extra2_cases.json",
                 ROOT / "benchmarks" / "data" / "heldout_cases.json"]:
        if path.is_file():
            for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
                found.extend(case["capabilities"])
    return found


@pytest.fixture(scope="module")
def encoder() -> static.StaticEncoder:
    return static.default_encoder()


@pytest.fixture(scope="module")
def hf_tokenizer():  # noqa: ANN201 - the optional `tokenizers` type
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(_assets.tokenizer_path()))
    tok.no_truncation()
    tok.no_padding()
    return tok


# -- table ------------------------------------------------------------------------------------


def test_packaged_table_matches_its_pin(encoder: static.StaticEncoder) -> None:
    table = encoder.table
    assert (table.rows, table.dims) == (30522, static.DIMENSION)
    assert table.flags & static.FLAG_WEIGHTED and table.flags & static.FLAG_CENTRED
    assert len(table.scales) == table.rows and len(table.data) == table.rows * table.dims
    assert static.table_digest() == _assets.STATIC_TABLE_SHA256
    assert _assets.static_table_path().stat().st_size == _assets.STATIC_TABLE_SIZE
    assert all(table.scales[i] == 0.0 for i in (0, 100, 101, 102, 103))  # specials carry nothing
    assert table.scales[encoder.tokenizer.vocab["deploy"]] > 0.0


def _tiny(rows: int = 3, dims: int = 2, **overrides: object) -> bytes:
    fields = {"magic": b"RANKSTAT", "version": 1, "rows": rows, "dims": dims, "flags": 3}
    fields.update(overrides)
    header = struct.pack("<8sIIII", fields["magic"], fields["version"], fields["rows"],
                         fields["dims"], fields["flags"])
    return header + bytes(range(rows * dims)) + struct.pack(f"<{rows}f", *[0.5] * rows)


def test_table_reads_header_rows_and_scales() -> None:
    table = static.StaticTable(_tiny())
    assert (table.rows, table.dims, table.flags) == (3, 2, 3)
    assert table.row(2) == [2.0, 2.5]
    assert list(table.scales) == [0.5, 0.5, 0.5]


@pytest.mark.parametrize(("blob", "message"), [
    (_tiny(magic=b"NOTATABL"), "not a static table"),
    (_tiny(version=2), "table version 2"),
    (_tiny(rows=0), "empty table"),
    (_tiny()[:-1], "the header promises"),
    (b"RANK", "shorter than the table header"),
])
def test_bad_tables_are_refused(blob: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        static.StaticTable(blob)


def test_a_corrupt_packaged_table_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / _assets.STATIC_TABLE_NAME
    blob = bytearray(_assets.static_table_path().read_bytes())
    blob[1000] ^= 1
    copy.write_bytes(bytes(blob))
    monkeypatch.setattr(static, "static_table_path", lambda: copy)
    with pytest.raises(ValueError, match="sha256"):
        static.StaticTable.load()


def test_the_packaged_table_is_mapped_not_copied() -> None:
    """The packaged table is a read-only mapping of the file (pages resident only where rows
    are read), and reads as the file's bytes do."""
    mapped = static.StaticTable.load()
    copied = static.StaticTable(_assets.static_table_path().read_bytes())
    assert isinstance(mapped._blob, mmap.mmap)
    assert mapped.data.readonly
    assert mapped.row(2000) == copied.row(2000) and mapped.scales == copied.scales


def test_the_packaged_vocabulary_is_parsed_once() -> None:
    """`WordPiece.load()` and `packaged_vocabulary()` (which the answerability words read) share
    one `Vocabulary`."""
    assert static.WordPiece.load().vocab is static.packaged_vocabulary()
    assert static.packaged_vocabulary()["deploy"] == static.WordPiece.load().ids("deploy")[0]


# -- tokenizer --------------------------------------------------------------------------------


def test_tokenizer_matches_tokenizers_on_every_eval_text(encoder: static.StaticEncoder,
                                                          hf_tokenizer) -> None:  # noqa: ANN001
    texts = _texts()
    assert len(texts) > 1000
    for text in texts:
        assert encoder.tokenizer.ids(text) == hf_tokenizer.encode(text, add_special_tokens=False).ids, text


@pytest.mark.parametrize("text", [
    "Héllo WORLD, ça va? naïve café", "東京タワーに行く", "İstanbul ΣΟΦΟΣ", "a\u00a0b\u2003c\u200bd",
    "tab\there\x00nul\x7fdel\ufffd", "x" * 101 + " ok", "[CLS] literal [SEP]token[UNK]",
    "storage::presignUrl({\"key\": 1})", "$100 + 5% <= 3^2 | ~x `y`", "antidisestablishmentarianism",
    "", "   ", "🙂 emoji ☃",
])
def test_tokenizer_edge_cases_match_tokenizers(encoder: static.StaticEncoder, hf_tokenizer,  # noqa: ANN001
                                               text: str) -> None:
    assert encoder.tokenizer.ids(text) == hf_tokenizer.encode(text, add_special_tokens=False).ids


#: The scripts requests and catalogs are written in. Outside them `tokenizers` (Rust) and
#: Python's `unicodedata` can disagree where a character's category changed between Unicode
#: versions (U+166D, Canadian syllabics chi sign: Po in Rust's tables, So in Python's).
_ALPHABET = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x24F),         # ASCII, controls, Latin
    st.characters(min_codepoint=0x300, max_codepoint=0x4FF),      # combining marks, Greek, Cyrillic
    st.characters(min_codepoint=0x2000, max_codepoint=0x206F),    # general punctuation, spaces
    st.characters(min_codepoint=0x3000, max_codepoint=0x30FF),    # CJK punctuation, kana
    st.characters(min_codepoint=0x4E00, max_codepoint=0x4FFF),    # CJK ideographs
    st.characters(min_codepoint=0xAC00, max_codepoint=0xAD00),    # Hangul
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1F64F),  # emoji
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_tokenizer_matches_tokenizers_on_random_text(encoder: static.StaticEncoder, hf_tokenizer,  # noqa: ANN001
                                                     text: str) -> None:
    assert encoder.tokenizer.ids(text) == hf_tokenizer.encode(text, add_special_tokens=False).ids


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_the_ascii_fast_path_is_the_general_path(text: str) -> None:
    assert static.ascii_words(text) == static.pre_tokenize(static.normalize(text))


def test_word_piece_splits_greedily(encoder: static.StaticEncoder) -> None:
    assert encoder.tokenizer.tokens("presignUrl") == ["pre", "##si", "##gn", "##ur", "##l"]
    assert encoder.tokenizer.tokens("x" * 101) == ["[UNK]"]
    with pytest.raises(TypeError):
        encoder.tokenizer.ids(b"bytes")  # type: ignore[arg-type]


# -- encoder and index ------------------------------------------------------------------------


def test_encode_gives_unit_vectors_and_zero_for_nothing(encoder: static.StaticEncoder) -> None:
    vectors = encoder.encode(["send an email to a customer", "", "[UNK] [CLS]"])
    assert all(isinstance(v, array) and v.typecode == "f" and len(v) == 256 for v in vectors)
    assert math.isclose(math.sqrt(sum(x * x for x in vectors[0])), 1.0, rel_tol=1e-5)
    assert not any(vectors[1]) and not any(vectors[2])
    with pytest.raises(TypeError):
        encoder.encode("a bare string")
    with pytest.raises(TypeError):
        encoder.encode([1])  # type: ignore[list-item]


def test_similar_texts_score_higher(encoder: static.StaticEncoder) -> None:
    index = static.StaticIndex()
    index.add(encoder.encode(["email::send Send an email message to a recipient.",
                              "calendar::event::create Create a calendar event.",
                              "storage::putObject Upload an object to a bucket."]))
    top = index.search(encoder.encode_one("mail the invoice to the customer"), 3)
    assert top[0][0] == 0 and top[0][1] > top[1][1]
    assert index.search(encoder.encode_one("book a meeting for Tuesday"), 1)[0][0] == 1


def test_index_validates_and_orders_ties() -> None:
    index = static.StaticIndex(dim=2)
    assert index.search([1.0, 0.0], 3) == []
    assert list(index.add([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])) == [0, 1, 2]
    assert index.search([1.0, 0.0], 2) == [(0, 1.0), (2, 1.0)]
    assert index.search([1.0, 0.0], 0) == []
    assert len(index.search([1.0, 0.0], 10)) == 3
    with pytest.raises(ValueError):
        index.add([[1.0]])
    with pytest.raises(ValueError):
        index.search([1.0], 1)
    with pytest.raises(ValueError):
        index.search([1.0, 0.0], -1)
    with pytest.raises(ValueError):
        static.StaticIndex(dim=0)


# -- compiled kernels against the reference --------------------------------------------------


@pytest.mark.parametrize("kernels", KERNELS)
def test_kernels_on_a_hand_computed_case(kernels) -> None:  # noqa: ANN001
    table = memoryview(bytes([3, 0, 0, 4, 1, 1])).cast("b")
    scales = array("f", [1.0, 0.5, 0.0])
    out = array("f", [9.0, 9.0])
    assert kernels.encode_ids(table, scales, 2, array("i", [0, 1]), out)
    assert list(out) == pytest.approx([3 / math.sqrt(13), 2 / math.sqrt(13)])
    assert not kernels.encode_ids(table, scales, 2, array("i", [2]), out)
    assert list(out) == [0.0, 0.0]
    matrix = array("f", [1.0, 0.0, 0.0, 1.0, 0.6, 0.8])
    assert kernels.cosine_top(matrix, array("f", [0.6, 0.8]), 2, 2) == [
        (2, pytest.approx(1.0)), (1, pytest.approx(0.8))]


@pytest.mark.skipif(_compiled is None, reason="_rank._static not built")
def test_compiled_kernels_agree_with_the_reference_on_every_eval_capability(
        encoder: static.StaticEncoder) -> None:
    """Same top-12 and scores within 1e-6 for every eval capability over the eval catalog (our
    held-out catalog where the shared eval set is not beside the checkout)."""
    source = EVAL / "catalog.json"
    if not source.is_file():
        source = ROOT / "benchmarks" / "data" / "heldout_catalog.json"
    catalog = json.loads(source.read_text(encoding="utf-8"))
    documents = [f"{r['function_id']} {r.get('description', '')}" for r in catalog]
    capabilities = [c for c in _capabilities() if c][:400]
    table, scales, dims = encoder.table.data, encoder.table.scales, encoder.dimension

    def vectors(kernels, texts: list[str]) -> array:  # noqa: ANN001
        flat = array("f")
        for text in texts:
            out = array("f", bytes(4 * dims))
            kernels.encode_ids(table, scales, dims, array("i", encoder.tokenizer.ids(text)), out)
            flat.extend(out)
        return flat

    assert vectors(_compiled, documents) == vectors(_static_reference, documents)
    matrix = vectors(_compiled, documents)
    queries = vectors(_compiled, capabilities)
    for i in range(len(capabilities)):
        query = queries[i * dims:(i + 1) * dims]
        ours = _compiled.cosine_top(matrix, query, dims, 12)
        reference = _static_reference.cosine_top(matrix, query, dims, 12)
        assert [r for r, _ in ours] == [r for r, _ in reference], capabilities[i]
        assert all(abs(a - b) <= 1e-6 for (_, a), (_, b) in zip(ours, reference))


@pytest.mark.skipif(_compiled is None, reason="_rank._static not built")
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=120),
       st.integers(0, 15))
def test_compiled_top_k_matches_the_reference(dims: int, values: list[float], k: int) -> None:
    rows = max(1, len(values) // dims)
    matrix = array("f", (values * (dims * rows // len(values) + 1))[: dims * rows])
    query = array("f", matrix[:dims])
    ours = _compiled.cosine_top(matrix, query, dims, k)
    reference = _static_reference.cosine_top(matrix, query, dims, k)
    assert ours == reference


def test_environment_forces_the_reference_kernels() -> None:
    code = "import _rank.static as s; print(s.IMPLEMENTATION)"
    env = {**os.environ, "RANK_IMPLEMENTATION": "python"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "python"


def test_static_lane_needs_no_numpy() -> None:
    code = ("import sys; sys.modules['numpy'] = None; sys.modules['onnxruntime'] = None\n"
            "import _rank, _rank.static as s\n"
            "v = s.default_encoder().encode(['list files in a folder'])[0]\n"
            "print(len(v), _rank.available()['static'])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["256", "True"]


@pytest.mark.skipif(_compiled is None, reason="_rank._static not built")
def test_required_kernels_that_cannot_load_are_an_import_error() -> None:
    code = "import sys; sys.modules['_rank._static'] = None\nimport _rank.static"
    env = {**os.environ, "RANK_IMPLEMENTATION": "cython"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.returncode != 0 and "_rank._static is missing" in result.stderr
    env["RANK_IMPLEMENTATION"] = "auto"
    fallback = subprocess.run([sys.executable, "-c", code + "; print(_rank.static.IMPLEMENTATION)"],
                              capture_output=True, text=True, env=env, timeout=60)
    assert fallback.returncode == 0 and fallback.stdout.strip() == "python", fallback.stderr


def _built(tmp_path: Path, raw: Any, pieces: list[str], dims: int, name: str) -> bytes:
    """`benchmarks/build_static_table.py` run on `raw` as step 1's rows (its CLI, a subprocess)."""
    np = pytest.importorskip("numpy")
    vectors, vocab, out = (tmp_path / f"{name}.npy", tmp_path / f"{name}.txt",
                           tmp_path / f"{name}.bin")
    np.save(vectors, raw)
    vocab.write_text("\n".join(pieces), encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "build_static_table.py"),
                           "--vectors", str(vectors), "--pieces", str(vocab), "--dims", str(dims),
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out.read_bytes()


def test_the_build_recipe_is_deterministic_and_round_trips(tmp_path: Path) -> None:
    """The steps after the model (PCA with its sign convention, SIF weights, int8) give the same
    bytes twice, and `StaticTable` reads back what they wrote: at full width the PCA is a
    rotation of the centred rows, so cosines between rows survive up to the int8 rounding.
    (The whole build, model included, is checked by `benchmarks/build_static_table.py
    --check`.)"""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(19)
    raw = rng.standard_normal((300, 16)).astype(np.float32)
    pieces = ["[PAD]", "[UNK]"] + [f"p{i}" for i in range(298)]
    first = _built(tmp_path, raw, pieces, 16, "first")
    assert first == _built(tmp_path, raw, pieces, 16, "again")
    read = static.StaticTable(first)
    assert (read.rows, read.dims) == (300, 16)
    assert read.scales[0] == 0.0 and read.scales[1] == 0.0  # specials carry no weight
    # the sign convention makes the table independent of the rows' sign: negated rows give
    # the negated int8 values and the same scales
    negated = static.StaticTable(_built(tmp_path, -raw, pieces, 16, "negated"))
    assert list(negated.scales) == list(read.scales)
    assert all(negated.row(i) == [-v for v in read.row(i)] for i in range(read.rows))
    centred = raw.astype(np.float64) - raw.astype(np.float64).mean(axis=0)

    def cosine(a: Any, b: Any) -> float:
        return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))

    for i, j in ((5, 6), (2, 299), (40, 41)):  # non-special pieces share one SIF weight here
        assert cosine(read.row(i), read.row(j)) == pytest.approx(cosine(centred[i], centred[j]),
                                                                  abs=0.02)


def test_the_packaged_vocab_txt_lists_the_tokenizer_json_vocabulary() -> None:
    """`vocab.txt` (what `packaged_vocabulary()` reads) is `tokenizer.json`'s `model.vocab`:
    line `k` is the piece whose id is `k`, every piece once, nothing else."""
    from _rank._assets import VOCAB_SHA256, VOCAB_SIZE, tokenizer_path, vocab_path

    vocab = json.loads(tokenizer_path().read_bytes())["model"]["vocab"]
    in_id_order = sorted(vocab, key=vocab.__getitem__)
    assert [vocab[piece] for piece in in_id_order] == list(range(len(vocab)))
    expected = "".join(piece + "\n" for piece in in_id_order).encode("utf-8")
    assert vocab_path().read_bytes() == expected
    assert (len(expected), hashlib.sha256(expected).hexdigest()) == (VOCAB_SIZE, VOCAB_SHA256)
    packaged = static.packaged_vocabulary()
    assert dict(packaged.items()) == vocab


def test_a_vocabulary_from_pieces_equals_one_from_a_mapping() -> None:
    from _rank.vocabulary import Vocabulary

    pieces = ["[UNK]", "send", "##ing", "mail", "é", "日本"]
    built = Vocabulary.from_pieces(pieces)
    mapped = Vocabulary(dict(zip(pieces, range(len(pieces)))))
    assert list(built.items()) == list(mapped.items())
    assert built.piece(4) == "é" and built.get("日本") == 5 and built.get("nope") is None
    assert built.longest == mapped.longest
    with pytest.raises(ValueError, match="listed twice"):
        Vocabulary.from_pieces(["a", "b", "a"])
