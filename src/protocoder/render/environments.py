"""The sandboxed Jinja2 environments the templates run in, their filters, and template errors.

Templates hold layout only. Everything they print passes through an escaping
``finalize`` hook (Markdown or LaTeX), so a template cannot forget to escape; the
filters that build markup themselves (basis text, citations) return marker strings that
the hook leaves alone. Counting, ordering and citation numbering happen in Python
(:mod:`.tables`, :mod:`.agreement_table`).

A workspace's own ``templates/`` folder overrides the built-in templates file by file.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from ..errors import InvalidInput, Problem
from ..storage.outputs import workspace_template_loader
from .escape import (
    Latex,
    Markdown,
    inline_html,
    inline_to_latex,
    inline_to_markdown,
    latex_escape,
    latex_url,
    md_escape,
)
from .latex_text import break_long_words, id_breaks

BUILTIN_TEMPLATES = Path(__file__).parent / "templates"


# Templates in a workspace's templates/ come with the workspace, which may be someone
# else's: the sandbox keeps them to laying out (no attribute walk to os.popen, ranges of
# at most 100,000), so rendering a cloned review cannot run code.


class _Sandbox(SandboxedEnvironment):
    """The sandbox, with a shorter way to a key of a plain dict (every row the templates print).

    ``row.basis`` first asks the dict for an attribute ``basis``: a plain dict has only its
    class's attributes, so for any other name that try can only fail (raising an exception
    each time) before the key is looked up, which is what is done here directly.
    """

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except (TypeError, LookupError):
                pass
        return super().getattr(obj, attribute)


_DICT_ATTRIBUTES = frozenset(dir(dict))


def _loader(template_dirs: Sequence[Path]) -> jinja2.BaseLoader:
    return jinja2.ChoiceLoader([*(workspace_template_loader(d) for d in template_dirs if d.is_dir()),
                                jinja2.FileSystemLoader(str(BUILTIN_TEMPLATES))])


def _finalize_md(value: Any) -> str:
    return value if isinstance(value, Markdown) else md_escape(str(value))


def _finalize_tex(value: Any) -> str:
    return value if isinstance(value, Latex) else latex_escape(str(value))


def markdown_environment(template_dirs: Sequence[Path] = ()) -> jinja2.Environment:
    """Jinja2 environment for Markdown templates (``*.md.j2``)."""
    env = _Sandbox(loader=_loader(template_dirs), undefined=jinja2.StrictUndefined,
                               trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                               autoescape=False, finalize=_finalize_md)
    env.filters.update(basis=lambda text: inline_to_markdown(text), cites=_cites_md,
                       raw=lambda text: Markdown(str(text)), num=format_number, autolink=_autolink_md,
                       capitalize_first=capitalize_first, sentence=sentence)
    return env


def latex_environment(template_dirs: Sequence[Path] = ()) -> jinja2.Environment:
    """Jinja2 environment for LaTeX templates (``*.tex.j2``), with LaTeX-safe delimiters."""
    env = _Sandbox(loader=_loader(template_dirs), undefined=jinja2.StrictUndefined,
                               block_start_string=r"\BLOCK{", block_end_string="}",
                               variable_start_string=r"\VAR{", variable_end_string="}",
                               comment_start_string=r"\#{", comment_end_string="}",
                               line_statement_prefix=None, line_comment_prefix="%#",
                               trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                               autoescape=False, finalize=_finalize_tex)
    env.filters.update(basis=lambda text: Latex(break_long_words(inline_to_latex(text))), cites=_cites_tex,
                       url=latex_url, raw=lambda text: Latex(str(text)), num=format_number,
                       breakable=lambda text: Latex(break_long_words(latex_escape(str(text)))),
                       capitalize_first=capitalize_first, sentence=sentence, idbreak=id_breaks)
    return env


def html_environment(template_dirs: Sequence[Path] = ()) -> jinja2.Environment:
    """Jinja2 environment for the HTML report (``*.html.j2``): autoescaped, basis Markdown rendered to HTML."""
    env = _Sandbox(loader=_loader(template_dirs), undefined=jinja2.StrictUndefined,
                               trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                               autoescape=True)
    env.filters.update(basis=inline_to_html, num=format_number, capitalize_first=capitalize_first, sentence=sentence,
                       web_url=lambda url: str(url) if str(url).lower().startswith(("http://", "https://")) else "")
    return env


def inline_to_html(text: str) -> Markup:
    """Basis text (inline Markdown) as HTML; raw HTML in it is escaped, links only to http(s) and mailto."""
    html = inline_html(text)
    # markdown-it's own link check already drops javascript: and data: links; keep only the schemes the
    # other targets allow, so the report links to nothing the tables would not.
    html = re.sub(r'<a href="(?!https?://|mailto:)[^"]*">', "<a>", html)
    return Markup(html.replace("<a href=", '<a rel="noreferrer" href='))


def sentence(text: str) -> str:
    """The text ending with a full stop, unless it already ends with one (or ``?``, ``!``)."""
    text = str(text).strip()
    return text if not text or text[-1] in ".?!" else text + "."


def capitalize_first(text: str) -> str:
    """The text with its first letter upper-cased and the rest as written (unlike Jinja's ``capitalize``)."""
    text = str(text)
    return text[:1].upper() + text[1:]


def _autolink_md(url: str) -> Markdown:
    """A URL as a Markdown autolink when it is a web address, else as escaped text."""
    url = str(url).strip()
    if url.lower().startswith(("http://", "https://")):
        return Markdown(f"<{quote(url, safe=_URL_SAFE)}>")
    return md_escape(url)


_URL_SAFE = "/:?&=+-_.~,;@!*#%'[]$()"


def _cites_md(keys: Iterable[str], numbers: dict[str, int]) -> Markdown:
    found = sorted({numbers[key] for key in keys if key in numbers})
    return Markdown(f"[{', '.join(str(n) for n in found)}]" if found else "")


def _cites_tex(keys: Iterable[str], numbers: dict[str, int]) -> Latex:
    keys = [key for key in keys if key in numbers]
    return Latex(rf"\cite{{{','.join(keys)}}}" if keys else "")


def format_number(value: float | None, digits: int = 3) -> str:
    """A coefficient as printed: ``digits`` decimals, or ``undefined`` (the templates' ``num`` filter)."""
    return "undefined" if value is None else f"{value:.{digits}f}"


def _template_problem(exc: Exception) -> Problem:
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return Problem(exc.filename or exc.name or "template", exc.lineno or 0, 1,
                       f"template syntax error: {exc.message}")
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(".j2")]
    if frames:
        frame = frames[-1]
        return Problem(frame.filename, frame.lineno or 0, 1, f"template failed: {type(exc).__name__}: {exc}")
    return Problem("template", 0, 0, f"template failed: {type(exc).__name__}: {exc}")


def render_template(env: jinja2.Environment, name: str, context: dict[str, Any]) -> str:
    """Render template ``name``; a missing, undecodable or failing template raises :class:`InvalidInput`
    naming the template file and line."""
    try:
        return env.get_template(name).render(context)
    except jinja2.TemplateNotFound as exc:
        raise InvalidInput([Problem(name, 0, 0, f"template not found: {exc.name}")]) from None
    except UnicodeDecodeError as exc:
        raise InvalidInput([_undecodable_template(env, name, exc)]) from None
    except Exception as exc:  # noqa: BLE001 - a user's template may raise anything
        raise InvalidInput([_template_problem(exc)]) from None


def _undecodable_template(env: jinja2.Environment, name: str, exc: UnicodeDecodeError) -> Problem:
    """Name the template file (and line) holding bytes that are not UTF-8."""
    loaders = getattr(env.loader, "loaders", [env.loader])
    searchpath = [folder for loader in loaders for folder in getattr(loader, "searchpath", [])]
    path = next((Path(folder) / name for folder in searchpath if (Path(folder) / name).is_file()), Path(name))
    raw = exc.object if isinstance(exc.object, bytes) else b""
    line = raw.count(b"\n", 0, exc.start) + 1
    return Problem(str(path), line, 1, f"template is not valid UTF-8 (byte 0x{raw[exc.start]:02x})"
                   if raw else "template is not valid UTF-8")
