"""An HTML page without a ``<title>`` is named by a heading only when the heading comes before its prose, as a
Markdown document is (``structure.document_title``): a heading after a paragraph names a section."""

from __future__ import annotations

import pytest

from protocoder.evidence.extract import extract

PAGES = [
    # prose first: the heading after it is a section ("Example Usage"), not the page's name
    ("<html><body><p>MiniWoB is a collection of web tasks for agents.</p><h1>Example Usage</h1>"
     "<p>Install it with pip.</p></body></html>", "MiniWoB is a collection of web tasks for agents."),
    # a bar of links is no prose: the heading after it names the page
    ("<html><body><p><a href='d'>Docs</a> | <a href='p'>Paper</a> | <a href='c'>Code of the project</a></p>"
     "<h1>WebArena Verified</h1><p>Each site runs in its own container.</p></body></html>", "WebArena Verified"),
    # a code block is content too
    ("<html><body><pre>docker run --rm harness</pre><h1>Running with Docker</h1></body></html>",
     "docker run --rm harness"),
    # a <title> still names the page
    ("<html><head><title>Runs</title></head><body><p>Five words of prose here.</p><h1>Usage</h1></body></html>",
     "Runs"),
]


@pytest.mark.parametrize(("page", "title"), PAGES)
def test_an_html_heading_names_the_page_only_before_its_prose(page: str, title: str) -> None:
    assert extract(page.encode(), "text/html").title == title
