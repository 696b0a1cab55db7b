"""Markdown to text with markdown-it-py (and footnotes): every block with its raw range."""

from __future__ import annotations

import html
import re
from array import array
from collections.abc import Iterator
from typing import Any

from ..locate import INLINE_TAGS
from .cleaning import clean, decode_text, first_line
from .layout import Layout
from .limits import ExtractionError
from .structure import PROSE_WORDS, Extracted, document_title, is_generic_heading, plain_heading

_MD_BREAK_AFTER = {"paragraph_close": "\n\n", "heading_close": "\n\n", "bullet_list_close": "\n\n",
                   "ordered_list_close": "\n\n", "list_item_close": "\n", "blockquote_close": "\n\n",
                   "tr_close": "\n", "table_close": "\n\n", "hr": "\n\n", "footnote_close": "\n\n",
                   "admonition_title_close": "\n", "admonition_close": "\n\n"}
_MD_CONTAINERS = {"list_item_open": "list_item", "blockquote_open": "blockquote", "footnote_open": "footnote",
                  "tr_open": "table_row", "th_open": "cell", "td_open": "cell", "admonition_open": "admonition"}
_ADMONITION_MARK = re.compile(r"^\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*\n?", re.I)
"""GitHub's alert marker, the first line of a blockquote: ``> [!NOTE]``."""
_SNIPPET = re.compile(r"^;?-{1,2}8<-{1,2}(?:[ \t]|$)")
"""MkDocs' snippet line (``--8<-- "file.md"``): an include directive, not text a reader sees."""
_UNDEFINED_REFERENCE = re.compile(r"\[([^\[\]\n]{1,200})\]\[([^\[\]\n]{0,100})\]")
"""A reference-style link whose definition is elsewhere (MkDocs' autorefs, another page):
its text is what a reader sees."""
_BANNER_HEADING = re.compile(r"<h[1-3]\b[^>]*>(.*?)</h[1-3]\s*>", re.I | re.S)
_BANNER_IMAGE = re.compile(r"<img\b[^>]*?\balt\s*=\s*[\"']([^\"']{1,200})[\"']", re.I)
_NAME_WORDS = 5
"""Most words of an alt text that names a project (a logo's), rather than saying what it does."""
_IMAGE_SOURCE = re.compile(r"<img\b[^>]*?\bsrc\s*=\s*[\"']([^\"']*)[\"']", re.I)


def _is_prose(children: list[Any]) -> bool:
    """True when an inline token's children say something in words of their own: at least
    :data:`PROSE_WORDS` words outside links (Markdown or ``<a>``) and images (whose alt text is no prose)."""
    depth = words = 0
    for child in children:
        if child.type == "link_open":
            depth += 1
        elif child.type == "link_close":
            depth -= 1
        elif child.type == "html_inline" and re.match(r"</?a\b", child.content, re.I):
            depth += -1 if child.content.startswith("</") else 1
        elif child.type in ("text", "code_inline") and depth <= 0:
            words += sum(1 for word in child.content.split() if any(char.isalnum() for char in word))
            if words >= PROSE_WORDS:
                return True
    return False


def _only_images(children: list[Any]) -> bool:
    """True when a heading's children are images, the links around them and spaces: a row of badges
    (rliable's ``# [![Open In Colab](…)] [![Website](…)]``), whose alt texts name no document."""
    kinds = {child.type for child in children if not (child.type == "text" and not child.content.strip())}
    return "image" in kinds and kinds <= {"image", "link_open", "link_close", "softbreak"}


def _line_starts(raw: str) -> array:
    """Offsets where the lines of ``raw`` start, a line ending at ``\\r\\n``, ``\\r`` or ``\\n``
    (as markdown-it counts them: its line numbers index this list; 8 bytes a line)."""
    starts = array("q", [0])
    starts.extend(m.end() for m in re.finditer("\r\n|\r|\n", raw))
    return starts


def _parser() -> Any:
    """The Markdown parser every source is read with (CommonMark, tables, footnotes, admonitions)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.admon import admon_plugin
    from mdit_py_plugins.footnote import footnote_plugin

    md = MarkdownIt("commonmark").enable("table").use(footnote_plugin).use(admon_plugin)
    rule = next(rule for rule in md.block.ruler.__rules__ if rule.name == "admonition")
    md.block.ruler.at("admonition", _admonition_past_blank_lines(rule.fn), {"alt": list(rule.alt)})
    return md


def _admonition_past_blank_lines(admonition: Any) -> Any:
    """mdit-py-plugins' admonition rule, with the body ending where Python-Markdown (MkDocs) ends it.

    Python-Markdown's ``admonition`` (and pymdown's ``details``, ``???``) reads the file in blocks
    split at blank lines and adds each block indented by four spaces to the admonition just before
    it: the body goes on past any number of blank lines while what follows is indented. The plugin
    ends it at two blank lines in a row (its "empty" is a line indented less than the body), so a
    paragraph after them was read as an indented code block outside the admonition. Here a blank
    line is counted, while the plugin reads the admonition, as indented like the line after it
    (as if it held that many spaces, which CommonMark reads as the same blank line): blank lines
    inside an indented body no longer end it, and those before a line that is not indented still do.
    """

    def rule(state: Any, start: int, end: int, silent: bool) -> bool:
        if not admonition(state, start, end, True):
            return False
        if silent:
            return True
        padded: list[tuple[int, int]] = []  # (blank line, its own indent), put back afterwards
        blanks: list[int] = []
        line = start + 1
        while line < end:
            if state.isEmpty(line):
                blanks.append(line)
            elif state.sCount[line] <= state.blkIndent:
                break  # not indented past the enclosing block: the admonition ends here whatever came before
            else:
                for blank in blanks:
                    padded.append((blank, state.sCount[blank]))
                    state.sCount[blank] = state.sCount[line]
                blanks = []
            line += 1
        try:
            return bool(admonition(state, start, end, False))
        finally:
            for blank, indent in padded:
                state.sCount[blank] = indent

    return rule


class _KnownLabels(dict[str, int]):
    """The footnote labels of the first pass: a definition read again in the second pass does not
    reset a label the text before it has already numbered (markdown-it reads every definition
    before any text, so a reference never sees a label reset after it)."""

    def __setitem__(self, key: str, value: int) -> None:
        if value == -1 and key in self:
            return
        super().__setitem__(key, value)


def _top_level_blocks(md: Any, source: str, env: dict[str, Any]) -> Iterator[list[Any]]:
    """The block tokens of ``source``, one top-level block at a time (its nested blocks with it).

    The loop of markdown-it's ``ParserBlock.tokenize`` at the top level, handing over each block's
    tokens as soon as it is read: the whole file's tokens are never held at once (a 25 MB README
    made 1.6 GB of them). Nested blocks (list items, blockquotes, footnotes) are read by
    markdown-it's own loop, inside the top-level block that holds them.
    """
    from markdown_it.rules_block.state_block import StateBlock

    state = StateBlock(source, md, env, [])
    rules = md.block.ruler.getRules("")
    line, end = state.line, state.lineMax
    has_empty_lines = False
    while line < end:
        state.line = line = state.skipEmptyLines(line)
        if line >= end or state.sCount[line] < state.blkIndent:
            break
        if not any(rule(state, line, end, False) for rule in rules):
            raise RuntimeError("none of the block rules matched")
        if state.line <= line:
            raise RuntimeError("block rule didn't increment state.line")
        state.tight = not has_empty_lines
        line = state.line
        if line - 1 < end and state.isEmpty(line - 1):
            has_empty_lines = True
        if line < end and state.isEmpty(line):
            has_empty_lines = True
            line += 1
            state.line = line
        block, state.tokens = state.tokens, []
        yield block


def _tokens(md: Any, text: str) -> Iterator[Any]:
    """The tokens ``md.parse(text)`` returns, in the same order with the same content, made and
    dropped one top-level block at a time, so that memory does not grow with the file.

    Two passes: the first reads the blocks only for what text anywhere may refer to (link
    reference definitions, footnote labels), as markdown-it reads every block before any inline
    text; the second reads each block's inline text and hands its tokens over. Footnote
    definitions are held to the end, where markdown-it's footnote rule lays them out.
    """
    from markdown_it.rules_core.state_core import StateCore
    from mdit_py_plugins.footnote.index import footnote_tail

    names = md.core.ruler.get_active_rules()
    rules = dict(zip(names, md.core.ruler.getRules(""), strict=True))
    if names[:2] != ["normalize", "block"] or "footnote_tail" not in names:
        yield from md.parse(text)  # another chain than the one this mirrors: the whole parse
        return
    tail_at = names.index("footnote_tail")
    per_block = [rules[name] for name in names[2:] if name != "footnote_tail"]
    after_tail = [rules[name] for name in names[tail_at + 1:]]
    env: dict[str, Any] = {}
    state = StateCore(text, md, env)
    rules["normalize"](state)
    source, state.src = state.src, ""  # the normalised copy is the one read: the others are not held
    del text
    if "]:" in source:  # no "]:", no definition ("[label]:", "[^note]:") to look for first
        for _ in _top_level_blocks(md, source, env):
            pass
        footnotes = env.get("footnotes")
        if footnotes is not None:
            footnotes["refs"] = _KnownLabels(footnotes["refs"])
    inside = False
    label = ""
    held: dict[str, list[Any]] = {}
    for block in _top_level_blocks(md, source, env):
        state.tokens = block
        for rule in per_block:
            rule(state)
        for token in block:
            # The footnote rule's own filter, carried from block to block.
            if token.type == "footnote_reference_open":
                inside, label, held[":" + token.meta["label"]] = True, token.meta["label"], []
            elif token.type == "footnote_reference_close":
                inside = False
            elif inside:
                held[":" + label].append(token)
            else:
                yield token
    if "footnotes" not in env:
        return
    from markdown_it.token import Token

    state.tokens = []
    for key, tokens in held.items():
        state.tokens += [Token("footnote_reference_open", "", 1, meta={"label": key[1:]}), *tokens,
                         Token("footnote_reference_close", "", -1)]
    footnote_tail(state)
    for rule in after_tail:
        rule(state)
    yield from state.tokens


def extract_markdown(data: bytes) -> Extracted:
    """A Markdown file: its rendered text with headings, blocks and raw positions."""
    from markdown_it.token import Token

    raw = decode_text(data)
    source = clean(raw)
    tokens = _tokens(_parser(), source)
    del source  # the parser holds its own normalised copy
    starts = _line_starts(raw)
    out = Layout(raw)
    containers: list[str] = []
    heading_stack: list[tuple[int, str]] = []
    heading_lines: list[tuple[int, tuple[str, ...]]] = []  # (source line, path): footnotes are moved to the end
    heading_level = 0
    cells = 0
    banner = banner_image = ""  # an HTML banner's heading and image, before the first heading
    badges: set[int] = set()  # where headings made of badges only start: no title
    prose: int | None = None  # where the document's first prose starts: a heading after it names a section

    def raw_range(token: Any) -> tuple[int, int]:
        if token.map is None:
            return 0, len(raw)
        first, last = token.map
        return starts[min(first, len(starts) - 1)], starts[last] if last < len(starts) else len(raw)

    paths: dict[tuple[str, ...], tuple[str, ...]] = {}

    def path() -> tuple[str, ...]:
        # One tuple for all the blocks of a section (a million blocks would hold a million copies).
        key = tuple(title for _, title in heading_stack)
        return paths.setdefault(key, key)

    def kind() -> str:
        for container in reversed(containers):
            if container in ("list_item", "footnote", "admonition", "blockquote"):
                return container
        return "paragraph"

    previous = ""
    for token in tokens:
        token_type = token.type
        previous, before = token_type, previous
        if token_type == "heading_open":
            heading_level = int(token.tag[1])
            out.start_block("heading", path())
        elif token_type in _MD_CONTAINERS:
            container = _MD_CONTAINERS[token_type]
            if container == "cell":
                if cells:
                    out.gap("\t")
                cells += 1
            elif container == "table_row":
                cells = 0
                out.start_block("table_row", path())
            containers.append(container)
        elif token_type.endswith("_close") and token_type[:-6] + "_open" in _MD_CONTAINERS:
            if containers:
                containers.pop()
            if token_type == "tr_close":
                out.end_block()
        if token_type == "inline":
            children = list(token.children or [])
            if children and children[0].type == "text" and containers[-1:] == ["blockquote"]:
                mark = _ADMONITION_MARK.match(children[0].content)
                if mark:
                    # The marker says what kind of block this is; it is no part of its text.
                    containers[-1] = "admonition"
                    rest = children[0].content[mark.end():]
                    children = children[1:]
                    if rest:
                        children.insert(0, Token("text", "", 0, content=rest))
                    elif children and children[0].type == "softbreak":
                        children = children[1:]
            title = ""
            if heading_level:
                title = plain_heading(" ".join(_inline_text(children).split()))
                if title:
                    while heading_stack and heading_stack[-1][0] >= heading_level:
                        heading_stack.pop()
                    heading_stack.append((heading_level, title))
                    heading_lines.append((token.map[0] if token.map else 0, path()))
            elif before == "admonition_title_open" and token.map is not None and \
                    token.content not in raw[raw_range(token)[0]:raw_range(token)[1]]:
                # A title the admonition did not write ("??? tip" is titled "Tip"): shown, not in the file.
                out.start_block("admonition", path())
                out.emit(token.content)
                out.end_block()
                continue
            elif "table_row" not in containers and _SNIPPET.match(token.content):
                continue  # an include line: what it includes is not in this file
            elif "table_row" not in containers:
                block_path = path()
                if "footnote" in containers and token.map is not None:
                    # Footnotes are laid out at the end; their path is that of where they are written.
                    before = [p for line, p in heading_lines if line <= token.map[0]]
                    block_path = before[-1] if before else ()
                out.start_block(kind(), block_path)
            if prose is None and not heading_level and _is_prose(children):
                prose = out.length
            low, high = raw_range(token)
            offset = out.length + (len(out.pending) if out.parts else 0)
            _emit_inline(out, children, low, high)
            if heading_level:
                if title:
                    out.headings.append((offset, heading_level, title))
                    if _only_images(children):
                        badges.add(offset)
                out.end_block(path())
                heading_level = 0
            elif "table_row" not in containers:
                out.end_block()
        elif token_type in ("fence", "code_block"):
            prose = out.length if prose is None else prose  # code is the document's content, not front matter
            out.start_block("code", path())
            low, high = raw_range(token)
            out.emit(token.content.rstrip("\n"), low, high)
            out.end_block()
            out.gap("\n\n")
        elif token_type == "html_block":
            if not out.headings and not banner and prose is None:
                heading = _BANNER_HEADING.search(token.content)
                banner = html.unescape(re.sub(r"<[^>]*>", "", heading.group(1))) if heading else ""
                # "Table of Contents" set as an HTML heading (lbforaging's README) is a section name, not a title.
                banner = "" if is_generic_heading(banner) else banner
                image = _BANNER_IMAGE.search(token.content)
                if image and not banner_image:
                    banner_image = html.unescape(image.group(1))
                    # An image whose file is a logo and whose alt text is a name, a few words long, is the
                    # project's logo ("Level Based Foraging (LBF)", docs/img/logo.png); a longer alt text is a
                    # tagline ("Test, evaluate & monitor your AI application" on PareaLogoLight.png).
                    file = _IMAGE_SOURCE.search(image.group(0) + token.content[image.end():].split(">", 1)[0])
                    if file and re.search(r"logo", file.group(1).rsplit("/", 1)[-1], re.I) and \
                            len(banner_image.split()) <= _NAME_WORDS and not re.search(r"\blogo\b", banner_image, re.I):
                        banner_image += " logo"
            out.start_block("html", path())
            low, high = raw_range(token)
            # The text between tags, run by run, so that each run is found where it is written;
            # an inline tag (<em>) joins the runs around it, any other separates them.
            position: int | None = low
            space = False
            for run in re.split(r"(<[^>]*>)", token.content):
                if run.startswith("<") and run.endswith(">"):
                    name = re.match(r"</?([A-Za-z][A-Za-z0-9-]*)", run)
                    space = space or not (name and name.group(1).lower() in INLINE_TAGS)
                    continue
                words = re.sub(r"\s+", " ", html.unescape(run))
                if not words.strip():
                    space = space or bool(words)
                    continue
                if out.block_start is not None and (space or words[0] == " "):
                    out.emit(" ")
                position = out.emit(words.strip(), position, high)
                space = words[-1] == " "
            out.end_block()
            out.gap("\n\n")
        elif token_type == "paragraph_close" and token.hidden:
            out.gap("\n")  # the items of a tight list
        elif token_type in _MD_BREAK_AFTER:
            out.gap(_MD_BREAK_AFTER[token_type])
    headings = out.headings
    named = [heading for heading in headings if heading[0] not in badges]
    extracted = out.result(title=document_title(named, banner=banner, banner_image=banner_image, prose=prose))
    if not extracted.text.strip():
        raise ExtractionError("the Markdown file has no text")
    if not extracted.title and not headings:
        # A file of headings none of which names it (all sections, like OSWorld's README) is
        # named after its file by the caller: its first line is a banner's links, not a title.
        extracted.title = first_line(extracted.text)
    return extracted


_LINK_END = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*(?:[ \t]+\"[^\"\n]*\")?\)|\]\[[^\]\n]{0,100}\]|\]")
"""What closes a link's or image's text in the file: ``](url "title")``, ``][ref]`` or ``]``."""


def _past_link(raw: str | None, position: int, high: int) -> int:
    """The raw offset after the ``](url)`` that closes a link's text at ``position`` (or
    ``position`` when none is there): the text after a link is looked for after its URL, never
    in it (the full stop after ``[DockerHub](https://hub.docker.com)`` is not the one in the URL)."""
    if raw is None:
        return position
    close = raw.find("]", position, high)
    if close < 0:
        return position
    tail = _LINK_END.match(raw, close)
    return tail.end() if tail else position


def _emit_inline(out: Layout, children: list[Any], low: int, high: int) -> int:
    """Emit an inline token's children, each found in the raw text from ``low`` on."""
    position = low
    for child in children:
        if child.type == "text" and "][" in child.content:
            position = _emit_references(out, child.content, position, high)
        elif child.type in ("text", "code_inline"):
            position = out.emit(child.content, position, high) or position
        elif child.type in ("softbreak", "hardbreak"):
            position = out.emit("\n", position, high) or position
        elif child.type == "image":
            position = _emit_inline(out, list(child.children or []), position, high)
            if child.markup != "autolink":
                position = _past_link(out.raw, position, high)
        elif child.type == "link_close" and child.markup != "autolink":
            position = _past_link(out.raw, position, high)
        elif child.type == "html_inline" and re.match(r"<br\b", child.content, re.I):
            out.emit("\n")
    return position


def _emit_references(out: Layout, content: str, position: int, high: int) -> int:
    """Emit text holding reference-style links with no definition here as a reader sees them:
    ``[text][ref]`` is ``text``."""
    last = 0
    for match in _UNDEFINED_REFERENCE.finditer(content):
        position = out.emit(content[last:match.start()], position, high) or position
        position = out.emit(match.group(1), position, high) or position
        position = _past_link(out.raw, position, high)
        last = match.end()
    return out.emit(content[last:], position, high) or position


def _inline_text(children: list[Any]) -> str:
    out = []
    for child in children:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif child.type == "image":
            out.append(_inline_text(child.children or []))
    return "".join(out)
