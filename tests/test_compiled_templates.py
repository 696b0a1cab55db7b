"""The built-in templates' code is generated ahead of time (render/compiled/, by
scripts/compile_templates.py): it must be the code of the templates as they are, it must be
what rendering uses, and an edited template must never be rendered from old code."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pytest

from protocoder.errors import InvalidInput
from protocoder.render import compiled, environments
from protocoder.render.environments import compiled_sources, markdown_environment, render_template

COMPILED = Path(compiled.__file__).parent

same_jinja = pytest.mark.skipif(
    jinja2.__version__ != compiled.JINJA2_VERSION,
    reason=f"render/compiled/ was generated with Jinja2 {compiled.JINJA2_VERSION}, Jinja2 {jinja2.__version__} "
           "is installed (it compiles the templates itself; run scripts/compile_templates.py to regenerate)")


@same_jinja
def test_the_compiled_modules_are_the_code_of_the_templates_as_they_are() -> None:
    expected = compiled_sources()
    present = {path.name: path.read_text(encoding="utf-8") for path in COMPILED.glob("t_*.py")}
    assert sorted(present) == sorted(expected), "run: python scripts/compile_templates.py"
    for name, source in expected.items():
        assert present[name] == source, f"{name} is out of date; run: python scripts/compile_templates.py"


@same_jinja
def test_rendering_the_bundled_review_compiles_no_built_in_template(
        bundled: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    compiled_names: list[str | None] = []
    compile_template = jinja2.Environment.compile

    def counting(self: jinja2.Environment, source: str, name: str | None = None, *args: Any, **kwargs: Any) -> Any:
        compiled_names.append(name)
        return compile_template(self, source, name, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    result = cli("render", "--workspace", bundled, "--format", "all", "--standalone", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    assert {"ledger.tex", "report.html", "summary.md"} <= {p.name for p in (tmp_path / "out").iterdir()}
    assert compiled_names == []


def test_an_edited_built_in_template_is_rendered_from_its_source(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    edited = tmp_path / "templates"
    shutil.copytree(environments.BUILTIN_TEMPLATES, edited)
    (edited / "methods.md.j2").write_text("Edited: {{ title }}\n", encoding="utf-8")
    monkeypatch.setattr(environments, "BUILTIN_TEMPLATES", edited)
    env = markdown_environment()
    assert render_template(env, "methods.md.j2", {"title": "A review"}) == "Edited: A review\n"
    # The untouched templates still come from their compiled code, and give the same text.
    assert env.get_template("summary.md.j2").filename == str(edited / "summary.md.j2")


def test_a_failing_built_in_template_is_reported_at_its_own_file_and_line() -> None:
    with pytest.raises(InvalidInput) as raised:
        render_template(markdown_environment(), "summary.md.j2", {})
    problem = raised.value.problems[0]
    assert problem.path.endswith("summary.md.j2") and problem.line > 0, problem
    assert "is undefined" in problem.message
