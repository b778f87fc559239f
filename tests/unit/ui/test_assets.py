"""The asset table, the console's path rules, the watch variable and the static checks of the
hand-written assets (console-ui.md §1.3, §1.9, §3.1–§3.7, §5.2 items 1, 4, 6)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from iii_directory.ui.assets import (
    ASSETS,
    PAGE_MODULES,
    WATCH_ENV,
    UiAsset,
    packaged_dir,
    path_problem,
    read_packaged,
    unknown_asset_message,
    validate_table,
    watch_dir,
    watch_env_name,
)

from .css_scan import scan

MIB = 1024 * 1024


def test_table_rows() -> None:
    rows = {(a.path, a.trigger_type, a.kind, a.content_type) for a in ASSETS}
    assert rows == {
        ("iii-directory/page.js", "console:script", "script", "text/javascript; charset=utf-8"),
        ("iii-directory/styles.css", "console:style", "style", "text/css; charset=utf-8"),
        ("iii-directory/module.js", "console:module", "module", "text/javascript; charset=utf-8"),
        *((f"iii-directory/{name}", "console:module", "module", "text/javascript; charset=utf-8")
          for name in PAGE_MODULES),
    }
    assert len(PAGE_MODULES) >= 10, "page.js is split into its modules (issue 35 item 8)"


def test_table_paths_pass_the_console_rules() -> None:
    for asset in ASSETS:
        assert path_problem(asset.path, asset.trigger_type) is None
    validate_table(ASSETS)


@pytest.mark.parametrize(
    ("path", "trigger_type", "message"),
    [
        ("", "console:script", "path must not be empty"),
        ("a/" + "x" * 508 + ".js", "console:script", "path is over 512 characters"),
        ("a\\b.js", "console:script", "path 'a\\b.js' must not contain backslashes"),
        ("/a.js", "console:script", "path '/a.js' must not start with a slash"),
        ("a//b.js", "console:script", "path 'a//b.js' has an empty segment"),
        ("a/", "console:script", "path 'a/' has an empty segment"),
        ("a/../b.js", "console:script", "path 'a/../b.js' has a dot-only segment"),
        ("a/./b.js", "console:module", "path 'a/./b.js' has a dot-only segment"),
        ("A/b.js", "console:script", "path segment 'A' must start with a lowercase letter or digit"),
        ("a/.b.js", "console:script", "path segment '.b.js' must start with a lowercase letter or digit"),
        ("a/b c.js", "console:script", "path segment 'b c.js' has characters outside [a-z0-9._-]"),
        ("a/page.css", "console:script", "path 'a/page.css' must end in '.js' for a script asset"),
        ("a/mod.css", "console:module", "path 'a/mod.css' must end in '.js' for a module asset"),
        ("a/styles.js", "console:style", "path 'a/styles.js' must end in '.css' for a style asset"),
    ],
)
def test_path_rule_texts(path: str, trigger_type: str, message: str) -> None:
    assert path_problem(path, trigger_type) == message


def test_path_of_exactly_512_bytes_passes() -> None:
    path = "a/" + "x" * 507 + ".js"
    assert len(path) == 512
    assert path_problem(path, "console:script") is None


def test_duplicate_path_refuses_startup() -> None:
    with pytest.raises(ValueError, match=r"^duplicate ui asset path 'iii-directory/page\.js'$"):
        validate_table([UiAsset("iii-directory/page.js", "console:script"),
                        UiAsset("iii-directory/page.js", "console:module")])


def test_foreign_scope_refuses_startup() -> None:
    with pytest.raises(ValueError, match=r"^ui asset path 'other/page\.js' must start with 'iii-directory/'$"):
        validate_table([UiAsset("other/page.js", "console:script")])


def test_bad_path_refuses_startup_with_the_console_text() -> None:
    with pytest.raises(ValueError, match=r"^path 'iii-directory/Page\.js' has|^path segment 'Page\.js'"):
        validate_table([UiAsset("iii-directory/Page.js", "console:script")])


def test_unknown_asset_message_lists_every_path_sorted() -> None:
    assert unknown_asset_message("nope.js") == (
        "UNKNOWN_UI_ASSET: 'nope.js' is not one of this worker's ui assets (expected one of: "
        + ", ".join(sorted(f"iii-directory/{name}" for name in (*PAGE_MODULES, "module.js", "page.js", "styles.css")))
        + ")"
    )


def test_watch_variable_name() -> None:
    assert WATCH_ENV == "III_III_DIRECTORY_UI_WATCH"
    assert watch_env_name("my.worker-2") == "III_MY_WORKER_2_UI_WATCH"


@pytest.mark.parametrize("value", [None, "", "  ", "0", "false", "FALSE", "False"])
def test_watch_off(value: str | None) -> None:
    assert watch_dir(value) is None


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "True"])
def test_watch_packaged(value: str) -> None:
    assert watch_dir(value) == packaged_dir()
    assert (packaged_dir() / "page.js").is_file()


def test_watch_js_file_means_its_folder(tmp_path: Path) -> None:
    assert watch_dir("/x/page.js") == Path("/x")


def test_watch_relative_folder_resolves_against_cwd(tmp_path: Path) -> None:
    assert watch_dir("rel/dir", cwd=tmp_path) == tmp_path / "rel" / "dir"
    assert watch_dir("/abs/dir") == Path("/abs/dir")


# ------------------------------------------------------------------ static checks (§3.7)

STATIC_IMPORT = re.compile(r"^\s*(import\s[^(]|import\s*['\"{*]|export\s[^;]*\sfrom\s)", re.M)
DYNAMIC_IMPORT = re.compile(r"\bimport\s*\(\s*([^)]*)\)")


def _text(name: str) -> str:
    return read_packaged(next(a for a in ASSETS if a.file_name == name))


@pytest.mark.parametrize("asset", ASSETS, ids=lambda a: a.path)
def test_asset_non_empty_and_under_one_mib(asset: UiAsset) -> None:
    text = read_packaged(asset)
    assert text.strip()
    assert len(text.encode("utf-8")) < MIB


def test_page_exports() -> None:
    text = _text("page.js")
    assert "export default" in text
    assert re.search(r"^export const PAGE_VERSION = '[^']+';", text, re.M)


def test_module_exports() -> None:
    text = _text("module.js")
    assert re.search(r"^export const MODULE_API = 1;", text, re.M)
    assert re.search(r"^export function createKitsReview\(", text, re.M)


SCRIPTS = [a.file_name for a in ASSETS if a.file_name.endswith(".js")]


@pytest.mark.parametrize("name", SCRIPTS)
def test_no_static_imports(name: str) -> None:
    assert STATIC_IMPORT.findall(_text(name)) == []


def test_only_react_is_imported_dynamically() -> None:
    # React by name; on a console without host.importModule, the page's own modules beside page.js.
    assert [arg.strip() for arg in DYNAMIC_IMPORT.findall(_text("page.js"))] == ["siblingUrl(path, base", "'react'"]
    for name in SCRIPTS:
        if name != "page.js":
            assert DYNAMIC_IMPORT.findall(_text(name)) == [], name


def test_page_js_names_every_page_module() -> None:
    """page.js's setup imports exactly the modules the worker serves as `console:module` assets."""
    listed = re.findall(r"^  [a-z]+: 'iii-directory/([a-z]+\.js)',$", _text("page.js"), re.M)
    assert listed == list(PAGE_MODULES)


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_module_is_small(name: str) -> None:
    assert len(_text(name).splitlines()) <= 600, name


def test_stylesheet_is_fully_scoped() -> None:
    report = scan(_text("styles.css"))
    assert report.rules > 0
    assert report.unscoped == []
    assert report.bad_keyframes == []
    assert report.font_faces == 0


def test_scanner_catches_what_the_console_would_refuse() -> None:
    report = scan("""
        /* comment { } */
        body { margin: 0 }
        [data-iii-ui="iii-directory"] .a, .b { color: red }
        @media (max-width: 10px) { :root { --x: 1 } [data-iii-ui="iii-directory"] p { x: 1 } }
        @keyframes spin { from { opacity: 0 } }
        @keyframes iii-directory-spin { from { opacity: 0 } }
        @font-face { font-family: x; }
    """)
    assert report.unscoped == ["body", ".b", ":root"]
    assert report.bad_keyframes == ["spin"]
    assert report.keyframes == ["spin", "iii-directory-spin"]
    assert report.font_faces == 1


def test_package_json_marks_the_folder_as_es_modules() -> None:
    import json

    assert json.loads((packaged_dir() / "package.json").read_text())["type"] == "module"


def test_the_page_knows_the_bundled_agent_profiles() -> None:
    """The page words a delete of `default` as "the built-in comes back" from its own list of
    bundled ids (issue 21 §2); that list must name exactly the profiles this worker bundles."""
    import re

    from iii_directory.content.agents import bundled_profiles
    from iii_directory.ui.assets import packaged_dir

    text = (packaged_dir() / "rules.js").read_text(encoding="utf-8")
    match = re.search(r"export const BUILTIN_AGENT_IDS = \[([^\]]*)\];", text)
    assert match is not None
    assert sorted(re.findall(r"'([^']+)'", match.group(1))) == sorted(bundled_profiles())


def test_a_watched_file_caught_mid_rewrite_is_skipped(tmp_path: Path) -> None:
    """`writeFileSync` truncates before it writes: a poll in between reads an empty file, which
    must not be served as the page (the S12 hot-reload scenario once loaded the empty text)."""
    from iii_directory.ui.assets import read_text

    page = next(a for a in ASSETS if a.file_name == "page.js")
    assert read_text(tmp_path, page) is None
    (tmp_path / "page.js").write_text("")
    assert read_text(tmp_path, page) is None
    (tmp_path / "page.js").write_text(" \n")
    assert read_text(tmp_path, page) is None
    (tmp_path / "page.js").write_text("export default function setup() {}\n")
    assert read_text(tmp_path, page) == "export default function setup() {}\n"
