"""`protocoder validate`: every class of problem is reported as path:line:column: message."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import tree_digest

SHEET = "protocols/webarena/codes/casheekar.yaml"
PROTOCOL = "protocols/webarena/protocol.yaml"


def replace_in(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"fixture text {old!r} not found in {path}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def check(cli, workspace: Path, expected: str, message: str, *, warning: bool = False) -> str:
    """Run validate; assert exit 1 (for a warning: 0, and 1 with --strict), the located message,
    no traceback, and no file written."""
    before = tree_digest(workspace)
    result = cli("validate", "--workspace", workspace)
    assert result.exit_code == (0 if warning else 1), result.output
    if warning:
        assert cli("validate", "--workspace", workspace, "--strict").exit_code == 1
    assert "Traceback" not in result.stderr
    matching = [line for line in result.stderr.splitlines() if line.startswith(expected)]
    assert matching, f"no line starting {expected!r} in:\n{result.stderr}"
    assert any(message in line for line in matching), f"{message!r} not in {matching}"
    assert tree_digest(workspace) == before, "validate must never write"
    return result.stderr


def test_malformed_yaml(bundled: Path, cli) -> None:
    path = bundled / SHEET
    replace_in(path, "    code: NR\n", "    code: [NR\n")
    check(cli, bundled, f"{SHEET}:", "while parsing a flow sequence")


def test_tab_indentation(bundled: Path, cli) -> None:
    path = bundled / SHEET
    replace_in(path, "    code: NR\n", "\tcode: NR\n")
    line = line_of(path, "\tcode: NR")
    check(cli, bundled, f"{SHEET}:{line}:", "cannot start any token")


def test_duplicate_key(bundled: Path, cli) -> None:
    path = bundled / SHEET
    replace_in(path, "    code: NR\n", "    code: NR\n    code: P\n")
    check(cli, bundled, f"{SHEET}:{line_of(path, 'code: P')}:", "duplicate key")


def test_unknown_field(bundled: Path, cli) -> None:
    path = bundled / SHEET
    replace_in(path, "  open_work:\n", "  open_wrok:\n")
    check(cli, bundled, f"{SHEET}:{line_of(path, 'open_wrok')}:3:", "unknown field 'open_wrok'")


def test_unknown_code(bundled: Path, cli) -> None:
    path = bundled / SHEET
    replace_in(path, "    code: NR\n", "    code: XX\n")
    check(cli, bundled, f"{SHEET}:{line_of(path, 'code: XX')}:11:", "unknown code 'XX'")


def test_code_not_allowed_for_field(bundled: Path, cli) -> None:
    path = bundled / SHEET
    # NA is a code of the rubric, but only open work allows it.
    replace_in(path, "    code: E\n", "    code: NA\n")
    check(cli, bundled, f"{SHEET}:{line_of(path, 'code: NA')}:", "not allowed for field 'reset_retention'")


def test_missing_required_key(bundled: Path, cli) -> None:
    path = bundled / PROTOCOL
    replace_in(path, "name: WebArena\n", "")
    check(cli, bundled, f"{PROTOCOL}:", "missing required key 'name'")


def test_missing_basis_required_by_code(bundled: Path, cli) -> None:
    path = bundled / "protocols/tau-bench/codes/casheekar.yaml"
    text = path.read_text(encoding="utf-8")
    start = text.index("    basis:")
    end = text.index("    cites:", start)
    path.write_text(text[:start] + text[end:], encoding="utf-8")
    stderr = check(cli, bundled, f"protocols/tau-bench/codes/casheekar.yaml:{line_of(path, 'open_work:')}:",
                   "code 'NA' requires a basis", warning=True)
    assert "warning: code 'NA' requires a basis: the cell is incomplete" in stderr


def test_wrong_type(bundled: Path, cli) -> None:
    path = bundled / SHEET
    replace_in(path, "    cites: [zhou2024webarena]\n", "    cites: {a: 1}\n")
    check(cli, bundled, f"{SHEET}:{line_of(path, 'cites: {a: 1}')}:", "expected a list for 'cites'")


def test_duplicate_protocol_id(bundled: Path, cli) -> None:
    copy = bundled / "protocols" / "webarena-copy"
    copy.mkdir()
    (copy / "protocol.yaml").write_text((bundled / PROTOCOL).read_text(encoding="utf-8"), encoding="utf-8")
    stderr = check(cli, bundled, "protocols/webarena-copy/protocol.yaml:", "does not match its folder name")
    assert "duplicate protocol id 'webarena'" in stderr


@pytest.mark.parametrize("bad_id", ["../x", "a/b", "Web Arena"])
def test_unsafe_protocol_id(bundled: Path, cli, bad_id: str) -> None:
    path = bundled / PROTOCOL
    replace_in(path, "id: webarena\n", f'id: "{bad_id}"\n')
    check(cli, bundled, f"{PROTOCOL}:{line_of(path, 'id: ')}:", "is not a safe id")


def test_unsafe_protocol_folder(bundled: Path, cli) -> None:
    (bundled / "protocols" / "Bad Name").mkdir()
    check(cli, bundled, "protocols/Bad Name:", "is not a safe protocol id")


def test_citation_key_missing_from_bib(bundled: Path, cli) -> None:
    path = bundled / SHEET
    replace_in(path, "    cites: [zhou2024webarena]\n", "    cites: [nobody2099]\n")
    check(cli, bundled, f"{SHEET}:{line_of(path, 'nobody2099')}:", "citation key 'nobody2099' is not in references.bib")


def test_codes_for_missing_protocol(bundled: Path, cli) -> None:
    ghost = bundled / "protocols" / "ghost" / "codes"
    ghost.mkdir(parents=True)
    (ghost / "alice.yaml").write_text("cells: {}\n", encoding="utf-8")
    check(cli, bundled, "protocols/ghost/codes/alice.yaml:", "codes for protocol 'ghost', which does not exist")


def test_alias_bomb_is_refused_quickly(bundled: Path, cli) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    (bundled / SHEET).write_text("\n".join(lines) + "\n", encoding="utf-8")
    check(cli, bundled, f"{SHEET}:", "anchors and aliases")


def test_absurd_nesting_is_refused(bundled: Path, cli) -> None:
    (bundled / SHEET).write_text("cells: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    check(cli, bundled, f"{SHEET}:", "nesting deeper than")


def test_stale_rubric_version_is_flagged(bundled: Path, cli) -> None:
    rubric = bundled / "rubric" / "evaluation-boundary.yaml"
    replace_in(rubric, 'version: "1.0"\n', 'version: "1.1"\n')
    replace_in(rubric, '    revised: "1.0"\n', '    revised: "1.1"\n')  # open work redefined in 1.1
    stderr = check(cli, bundled, f"{SHEET}:{line_of(bundled / SHEET, 'rubric_version')}:",
                   "field 'open_work' was redefined in 1.1", warning=True)
    assert "warning:" in stderr
    # A warning does not block rendering.
    assert cli("render", "--workspace", bundled, "--format", "md").exit_code == 0


def test_every_problem_reported_at_once(bundled: Path, cli) -> None:
    replace_in(bundled / SHEET, "    code: NR\n", "    code: XX\n")
    replace_in(bundled / PROTOCOL, "name: WebArena\n", "")
    replace_in(bundled / "protocols/osworld/codes/casheekar.yaml", "    cites: [xie2024osworld]\n",
               "    cites: [nobody2099]\n")
    result = cli("validate", "--workspace", bundled)
    assert result.exit_code == 1
    assert "3 errors" in result.stderr


def test_render_refuses_invalid_workspace_with_the_same_messages(bundled: Path, cli) -> None:
    replace_in(bundled / SHEET, "    code: NR\n", "    code: XX\n")
    validate = cli("validate", "--workspace", bundled)
    render = cli("render", "--workspace", bundled)
    assert render.exit_code == 1
    problem = validate.stderr.splitlines()[0]
    assert problem in render.stderr.splitlines()
    assert not (bundled / "output").exists()


def test_not_a_workspace_is_a_usage_error(tmp_path: Path, cli) -> None:
    result = cli("validate", "--workspace", tmp_path)
    assert result.exit_code == 2
    assert "not a protocoder workspace" in result.stderr
