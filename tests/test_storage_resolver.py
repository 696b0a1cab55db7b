"""Issue 34: the fast loader remembers the tag of each short plain scalar (``fastload._RESOLVED``);
a remembered tag is the one the YAML 1.2 rules give, asked cold or warm, and the loaded data stays
what ruamel's own safe loader gives (``tests/test_properties.py`` checks that on arbitrary text)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import Resolver

from protocoder.storage import fastload

SCALARS = ["true", "True", "TRUE", "false", "null", "Null", "~", "", "1", "-1", "+1", "0x1F", "0o17", "1.0", ".5",
           "1e3", ".inf", "-.Inf", ".nan", "2026-08-15", "2026-08-15T12:00:00Z", "2026-13-45", "yes", "no", "on",
           "code", "E", "NR", "1.0.2", "10.1234/abc", "a: b", "- x", "#", "x" * 65]


def _rules(value: str) -> str:
    for name, regexp in Resolver.yaml_implicit_resolvers.get(value[:1], ()):
        if regexp.match(value):
            return str(name)
    return str(Resolver.DEFAULT_SCALAR_TAG)


def _fast(value: str) -> str:
    loader = fastload._FastSafeLoader("")
    try:
        return str(loader.resolve(ScalarNode, value, (True, False)).suffix)
    finally:
        loader.dispose()


@pytest.mark.parametrize("value", SCALARS)
def test_a_remembered_tag_is_the_rules_tag(value: str) -> None:
    fastload._RESOLVED.pop(value, None)
    assert _fast(value) == _rules(value)  # cold
    assert _fast(value) == _rules(value)  # warm, from the memo where the text is short
    assert (value in fastload._RESOLVED) == (len(value) <= 64)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="0123456789-+.:eEtTfFnNxXoO~ aZ_", max_size=12))
def test_any_short_text_resolves_as_the_rules_say_twice(value: str) -> None:
    assert _fast(value) == _rules(value)
    assert _fast(value) == _rules(value)


def test_quoted_text_is_never_resolved_nor_remembered() -> None:
    fastload._RESOLVED.pop("true", None)
    loader = fastload._FastSafeLoader("")
    try:
        assert loader.resolve(ScalarNode, "true", (False, True)) is fastload._STR
    finally:
        loader.dispose()
    assert "true" not in fastload._RESOLVED
    assert fastload.safe_load('a: "true"\nb: true\n')[0] == {"a": "true", "b": True}
