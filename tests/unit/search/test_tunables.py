"""Every numeric module-level constant of search (`search/`, its ranking core `search/ranking/`,
the encoder machinery `encoder/`, the hint hook `hints/`) says where it came from: a comment on
its line or the line above, or its docstring, that starts `spec` (a rule of docs/rules/search.md),
`chosen` (with its reason) or `fitted` (search/ranking/data/fitted.json)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import iii_directory.encoder
import iii_directory.hints
import iii_directory.search

SEARCH = Path(iii_directory.search.__file__).parent
PACKAGES = (SEARCH, Path(iii_directory.encoder.__file__).parent,
            Path(iii_directory.hints.__file__).parent)
"""The packages checked, each with its subpackages."""
MARK = re.compile(r"^(?:spec|chosen|fitted)\b", re.IGNORECASE)


def numeric(node: ast.expr) -> bool:
    """A number written in the code: a literal, or literals joined by operators (`48 * 1024`)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return numeric(node.operand)
    if isinstance(node, ast.BinOp):
        return numeric(node.left) and numeric(node.right)
    return False


def comments(source: str) -> dict[int, str]:
    """Each line's comment text, without the `#`."""
    return {token.start[0]: token.string.lstrip("#").strip()
            for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type == tokenize.COMMENT}


def unmarked(path: Path, root: Path = SEARCH.parent) -> list[str]:
    source = path.read_text(encoding="utf-8")
    body = ast.parse(source).body
    notes = comments(source)
    missing = []
    for index, node in enumerate(body):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None \
                or not numeric(node.value):
            continue
        texts = [notes.get(node.lineno, ""), notes.get(node.lineno - 1, "")]
        following = body[index + 1] if index + 1 < len(body) else None
        if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant) \
                and isinstance(following.value.value, str):
            texts.append(following.value.value.strip())
        if not any(MARK.match(text) for text in texts):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            missing.append(f"{path.relative_to(root)}:{node.lineno} {ast.unparse(target)}")
    return missing


def test_every_numeric_constant_in_search_is_marked() -> None:
    found = [line for package in PACKAGES for path in sorted(package.rglob("*.py"))
             for line in unmarked(path)]
    assert found == []


def test_the_check_sees_an_unmarked_constant(tmp_path: Path) -> None:
    module = tmp_path / "search" / "stage.py"
    module.parent.mkdir()
    module.write_text("A = 3  # chosen: a reason\n# spec: docs/rules/search.md §7.2\nB = 12\n"
                      "C = 48 * 1024\nD = 0.5\n\"\"\"Fitted: data/fitted.json.\"\"\"\n"
                      "E = 'text'\nF = -1  # a note without a mark\n", encoding="utf-8")
    assert unmarked(module, tmp_path) == ["search/stage.py:4 C", "search/stage.py:8 F"]
