"""The JSON Schemas `protocoder schema` prints: every file the project ships or its tests
build validates, and wrong files fail, as in an editor's YAML language server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

from protocoder.schemas import SCHEMAS, load_schema

from conftest import REPO
from review_factory import multilingual_review, wide_review


def _as_editor_sees(value: Any) -> Any:
    """YAML as a language server checks it: unquoted dates are text (YAML 1.2's core schema)."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: _as_editor_sees(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_editor_sees(item) for item in value]
    return value


def _read(path: Path) -> Any:
    return _as_editor_sees(YAML(typ="safe").load(path.read_text(encoding="utf-8")))


def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def workspace_files(root: Path) -> Iterator[tuple[str, Path]]:
    """Every hand-edited YAML file of a workspace, with the schema that describes it."""
    yield "protocoder", root / "protocoder.yaml"
    for path in sorted((root / "rubric").glob("*.yaml")):
        yield "rubric", path
    for path in sorted((root / "protocols").glob("*/protocol.yaml")):
        yield "protocol", path
    for path in sorted((root / "protocols").glob("*/codes/*.yaml")):
        yield "codes", path
    if (root / "team.yaml").is_file():
        yield "team", root / "team.yaml"


def errors_of(root: Path) -> list[str]:
    validators = {name: _validator(name) for name in SCHEMAS}
    found = []
    for name, path in workspace_files(root):
        for error in validators[name].iter_errors(_read(path)):
            found.append(f"{path.relative_to(root)}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
    return found


def test_every_schema_is_a_valid_json_schema() -> None:
    for name in SCHEMAS:
        _validator(name)  # check_schema raises on a broken schema


def test_the_bundled_workspace_and_the_packaged_rubric_validate() -> None:
    assert errors_of(REPO) == []
    assert len(list(workspace_files(REPO))) == 1 + 1 + 10 + 10
    packaged = REPO / "src" / "protocoder" / "data" / "evaluation-boundary.yaml"
    assert list(_validator("rubric").iter_errors(_read(packaged))) == []


def test_the_test_fixture_workspaces_validate(tmp_path: Path, cli: Callable[..., Any]) -> None:
    wide = wide_review(tmp_path / "wide")
    assert errors_of(wide) == []
    multilingual = multilingual_review(tmp_path / "multilingual", cli)
    assert errors_of(multilingual) == []


def test_a_team_file_the_cli_writes_validates(bundled: Path, cli: Callable[..., Any]) -> None:
    assert cli("team", "add", "ada", "--role", "reviewer", "--workspace", bundled).exit_code == 0
    assert cli("team", "add", "ben", "--role", "reviewer", "--protocols", "webarena,osworld",
               "--workspace", bundled).exit_code == 0
    assert cli("team", "add", "carol", "--role", "adjudicator", "--workspace", bundled).exit_code == 0
    assert errors_of(bundled) == []
    team = bundled / "team.yaml"
    team.write_text(team.read_text(encoding="utf-8") + "session_hours: 0.5\n", encoding="utf-8")
    assert errors_of(bundled) == []
    assert ("team", bundled / "team.yaml") in list(workspace_files(bundled))


def test_a_new_workspace_validates(tmp_path: Path, cli: Callable[..., Any]) -> None:
    result = cli("init", tmp_path / "new")
    assert result.exit_code == 0, result.stderr
    assert errors_of(tmp_path / "new") == []


def test_quotes_with_pinned_sources_and_the_agreed_keys_validate(tmp_path: Path, cli: Callable[..., Any]) -> None:
    from conftest import copy_bundled

    root = copy_bundled(tmp_path / "review")
    doc = tmp_path / "rules.md"
    doc.write_text("# Rules\n\n## Resets\n\nEvery task is reset to its initial snapshot before each attempt.\n",
                   encoding="utf-8")
    assert cli("source", "add", "swe-bench", doc, "--id", "rules", "--workspace", root).exit_code == 0
    result = cli("quote", "add", "--cell", "swe-bench/open_work", "--reviewer", "casheekar", "--source", "rules",
                 "Every task is reset to its initial snapshot before each attempt", "--workspace", root)
    assert result.exit_code == 0, result.stderr
    assert errors_of(root) == []
    # The keys agreed across the team, which other branches write: allowed by the schemas.
    sheet = _read(root / "protocols/swe-bench/codes/casheekar.yaml")
    cell = sheet["cells"]["open_work"]
    cell["assisted"] = True
    cell["quotes"][0].update(raw_start=10, raw_end=72, exact="Every task", prefix="# Rules\n", suffix=".")
    assert list(_validator("codes").iter_errors(sheet)) == []
    rubric = _read(root / "rubric/evaluation-boundary.yaml")
    rubric["fields"][0]["search_terms"] = ["teardown", "background job"]
    rubric["codes"][0]["search_terms"] = ["explicitly"]
    assert list(_validator("rubric").iter_errors(rubric)) == []
    assert list(_validator("protocoder").iter_errors({"rubric": "evaluation-boundary", "candidates": False})) == []


WRONG = [
    ("protocoder", {"rubric": "Evaluation Boundary"}, "rubric"),
    ("protocoder", {"candidates": "no"}, "candidates"),
    ("protocoder", {"titel": "typo"}, ""),
    ("rubric", {"id": "r", "title": "t", "version": 1.0, "codes": [], "fields": []}, "version"),
    ("protocol", {"id": "x", "name": "X", "sources": [{"title": "t", "version": "1", "accessed": "15 Aug"}]},
     "sources/0/accessed"),
    ("protocol", {"id": "x", "name": "X", "sources": [{"title": "t", "version": "1", "accessed": "2026-08-15"}]},
     "sources/0"),
    ("codes", {"cells": {"open_work": {"code": "E", "colour": "red"}}}, "cells/open_work"),
    ("codes", {"cells": {"open_work": {"code": "E", "assisted": "yes"}}}, "cells/open_work/assisted"),
    ("codes", {"cells": {"open_work": {"quotes": [{"source": "paper", "text": "x", "span": [3]}]}}},
     "cells/open_work/quotes/0/span"),
    ("codes", {"cells": {"open_work": {"quotes": [{"source": "paper", "text": "x", "raw_start": -1}]}}},
     "cells/open_work/quotes/0/raw_start"),
    ("codes", {"cells": {"Open Work": {"code": "E"}}}, "cells"),
    ("team", {"members": {"ada": {"role": "reviewr"}}}, "members/ada/role"),
    ("team", {"reviewers_per_cell": 0}, "reviewers_per_cell"),
    ("team", {"session_hours": 0}, "session_hours"),
    ("team", {"session_hours": "12h"}, "session_hours"),
    ("team", {"session_hours": 9000}, "session_hours"),
    ("team", {"members": {"Ada": {"role": "reviewer"}}}, "members"),
]


@pytest.mark.parametrize(("name", "document", "where"), WRONG)
def test_a_wrong_file_fails(name: str, document: Any, where: str) -> None:
    errors = list(_validator(name).iter_errors(document))
    assert errors, document
    assert where in ["/".join(map(str, error.absolute_path)) for error in errors]


def test_a_broken_bundled_file_fails(tmp_path: Path) -> None:
    root = tmp_path / "review"
    shutil.copytree(REPO / "protocols", root / "protocols")
    shutil.copytree(REPO / "rubric", root / "rubric")
    shutil.copy2(REPO / "protocoder.yaml", root / "protocoder.yaml")
    sheet = root / "protocols/webarena/codes/casheekar.yaml"
    sheet.write_text(sheet.read_text(encoding="utf-8").replace("    code: NR", "    kode: NR", 1), encoding="utf-8")
    assert errors_of(root) == ["protocols/webarena/codes/casheekar.yaml: cells/open_work: "
                               "Additional properties are not allowed ('kode' was unexpected)"]


def test_schema_command_prints_each_schema_and_lists_them(cli: Callable[..., Any]) -> None:
    for name in SCHEMAS:
        result = cli("schema", name)
        assert result.exit_code == 0
        assert json.loads(result.stdout) == load_schema(name)
    result = cli("schema", "nope")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "protocoder: error: unknown schema 'nope'; the schemas are: protocoder, rubric, protocol, codes, team"]
    help_text = cli("schema", "--help").stdout
    for name in SCHEMAS:
        assert name in help_text
