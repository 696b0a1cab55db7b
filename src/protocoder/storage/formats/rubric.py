"""The rubric file: fields, codes, prompts and versions, each checked where it is written."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model import (
    CODE_PATTERN,
    CODE_ROLES,
    COLOR_PATTERN,
    MAX_SHORT_LABEL,
    NOT_APPLICABLE,
    REQUIREMENT_NAMES,
    Answer,
    Code,
    Field,
    Prompt,
    Question,
    Rubric,
    version_key,
)
from ..findings import Findings, Reader, describe
from ..yamlio import KeyPath


def _check_version(reader: Reader, value: str, path: KeyPath) -> bool:
    try:
        version_key(value)
    except ValueError:
        reader.add(path, f"version {value!r} must be numbers separated by dots, such as \"1.0\"")
        return False
    return True


def parse_rubric(data: Any, findings: Findings) -> Rubric | None:
    """Parse a rubric file. Returns None when it is too broken to use."""
    r = Reader(findings)
    top = r.mapping(data, [], required=("id", "title", "version", "codes", "fields"),
                    optional=("description", "order", "prompts"), what="a rubric mapping")
    if top is None:
        return None
    rubric_id = r.slug(top, "id", [], what="rubric id")
    version = r.text(top, "version", [], required=True, version=True)
    if version:
        _check_version(r, version, ["version"])

    codes: list[Code] = []
    raw_codes = top.get("codes")
    if not isinstance(raw_codes, list) or not raw_codes:
        r.add(["codes"], "expected a non-empty list of codes")
        raw_codes = []
    for index, raw in enumerate(raw_codes):
        path = ["codes", index]
        item = r.mapping(raw, path, required=("id", "label", "definition"),
                         optional=("guidance", "requires", "role", "short", "color", "search_terms"),
                         what="a code mapping")
        if item is None:
            continue
        code_id = r.text(item, "id", path, required=True)
        if code_id and not CODE_PATTERN.match(code_id):
            r.add([*path, "id"], f"code id {code_id!r} must be 1-16 letters, digits, '_', '+' or '-'")
        if any(code.id == code_id for code in codes):
            r.add([*path, "id"], f"duplicate code id {code_id!r}")
        requires = r.text_list(item, "requires", path) if "requires" in item else ("source", "basis")
        for req_index, name in enumerate(requires):
            if name not in REQUIREMENT_NAMES:
                r.add([*path, "requires", req_index],
                      f"unknown requirement {name!r} (expected: {', '.join(REQUIREMENT_NAMES)})")
        role = r.text(item, "role", path).strip()
        if role and role not in CODE_ROLES:
            r.add([*path, "role"], f"unknown role {role!r} (expected: {', '.join(CODE_ROLES)})")
            role = ""
        color = r.text(item, "color", path).strip()
        if color and not COLOR_PATTERN.match(color):
            r.add([*path, "color"], f"colour {color!r} must be written #RRGGBB, e.g. \"#1b7837\"")
            color = ""
        short = _short_label(r, item, path)
        code = Code(code_id, r.text(item, "label", path, required=True), r.text(item, "definition", path,
                    required=True), r.text(item, "guidance", path), tuple(requires), role, short, color,
                    r.text_list(item, "search_terms", path))
        if code_id == "NA" and not role:
            r.add([*path, "id"], f"code 'NA' declares no role: add 'role: {NOT_APPLICABLE}' if it means "
                                 "not applicable (agreement's --na exclude and the ordinal scale go by the role)",
                  severity="warning")
        codes.append(code)
    code_ids = {code.id for code in codes}

    order: tuple[str, ...] | None = None
    if top.get("order") is not None:
        order = r.ids(top, "order", [])
        na_ids = {code.id for code in codes if code.role == NOT_APPLICABLE}
        for index, code_id in enumerate(order):
            if code_id not in code_ids:
                r.add(["order", index], f"order names {code_id!r}, which is not a code of this rubric")
            elif code_id in na_ids:
                r.add(["order", index], f"order names {code_id!r}, a not-applicable code: the ordinal scale "
                                        "leaves not-applicable codes out")
        if len(set(order)) != len(order):
            r.add(["order"], "order lists a code twice")

    fields: list[Field] = []
    raw_fields = top.get("fields")
    if not isinstance(raw_fields, list) or not raw_fields:
        r.add(["fields"], "expected a non-empty list of fields")
        raw_fields = []
    for index, raw in enumerate(raw_fields):
        parsed = _parse_field(r, raw, ["fields", index], code_ids, version)
        if parsed is not None:
            if any(f.id == parsed.id for f in fields):
                r.add(["fields", index, "id"], f"duplicate field id {parsed.id!r}")
            fields.append(parsed)

    prompts: list[Prompt] = []
    raw_prompts = top.get("prompts") or []
    if not isinstance(raw_prompts, list):
        r.add(["prompts"], f"expected a list of prompts, found {describe(raw_prompts)}")
        raw_prompts = []
    for index, raw in enumerate(raw_prompts):
        path = ["prompts", index]
        item = r.mapping(raw, path, required=("id", "label"), optional=("help",), what="a prompt mapping")
        if item is None:
            continue
        prompt_id = r.slug(item, "id", path, what="prompt id")
        if any(p.id == prompt_id for p in prompts):
            r.add([*path, "id"], f"duplicate prompt id {prompt_id!r}")
        prompts.append(Prompt(prompt_id, r.text(item, "label", path, required=True), r.text(item, "help", path)))

    return Rubric(rubric_id, r.text(top, "title", [], required=True), version, tuple(codes),
                  tuple(fields), order, tuple(prompts), r.text(top, "description", []))


def _parse_field(r: Reader, raw: Any, path: list[str | int], code_ids: set[str],
                 rubric_version: str) -> Field | None:
    item = r.mapping(raw, path, required=("id", "label", "codes"),
                     optional=("revised", "question", "definition", "guidance", "decision", "short", "search_terms"),
                     what="a field mapping")
    if item is None:
        return None
    field_id = r.slug(item, "id", path, what="field id")
    allowed = r.ids(item, "codes", path)
    if not allowed and isinstance(item.get("codes"), list):
        r.add([*path, "codes"], "a field must allow at least one code, or it can never be coded")
    if len(set(allowed)) != len(allowed):
        r.add([*path, "codes"], "the field lists a code twice")
    for index, code_id in enumerate(allowed):
        if code_id not in code_ids:
            r.add([*path, "codes", index], f"field allows {code_id!r}, which is not a code of this rubric")
    revised = r.text(item, "revised", path, version=True) or rubric_version
    if "revised" in item and revised and _check_version(r, revised, [*path, "revised"]) and rubric_version:
        try:
            if version_key(revised) > version_key(rubric_version):
                r.add([*path, "revised"], f"field revised in {revised}, later than the rubric version {rubric_version}")
        except ValueError:
            pass

    questions: list[Question] = []
    raw_decision = item.get("decision") or []
    if not isinstance(raw_decision, list):
        r.add([*path, "decision"], f"expected a list of questions, found {describe(raw_decision)}")
        raw_decision = []
    question_ids = [q.get("id") for q in raw_decision if isinstance(q, dict)]
    for q_index, raw_q in enumerate(raw_decision):
        q_path = [*path, "decision", q_index]
        q = r.mapping(raw_q, q_path, required=("id", "ask", "answers"), optional=("help",),
                      what="a question mapping")
        if q is None:
            continue
        answers = []
        raw_answers = q.get("answers")
        if not isinstance(raw_answers, list) or not raw_answers:
            r.add([*q_path, "answers"], "expected a non-empty list of answers")
            raw_answers = []
        for a_index, raw_a in enumerate(raw_answers):
            a_path = [*q_path, "answers", a_index]
            a = r.mapping(raw_a, a_path, required=("label",), optional=("code", "next"),
                          what="an answer mapping")
            if a is None:
                continue
            code = r.text(a, "code", a_path) or None
            nxt = r.text(a, "next", a_path) or None
            if (code is None) == (nxt is None):
                r.add(a_path, "an answer needs exactly one of 'code' (the proposed code) or 'next' (a question id)")
            if code is not None and code not in allowed:
                r.add([*a_path, "code"], f"answer proposes {code!r}, which this field does not allow")
            if nxt is not None:
                later = question_ids[q_index + 1:]
                if nxt not in later:
                    r.add([*a_path, "next"], f"'next' must name a later question of this field, not {nxt!r}")
            answers.append(Answer(r.text(a, "label", a_path, required=True), code, nxt))
        questions.append(Question(r.text(q, "id", q_path, required=True), r.text(q, "ask", q_path, required=True),
                                  tuple(answers), r.text(q, "help", q_path)))
    return Field(field_id, r.text(item, "label", path, required=True), allowed, revised,
                 r.text(item, "question", path), r.text(item, "definition", path),
                 r.text(item, "guidance", path), tuple(questions), _short_label(r, item, path),
                 r.text_list(item, "search_terms", path))


def _short_label(r: Reader, item: Mapping[str, Any], path: KeyPath) -> str:
    short = r.text(item, "short", path).strip()
    if len(short) > MAX_SHORT_LABEL:
        r.add([*path, "short"], f"a short label has at most {MAX_SHORT_LABEL} characters; this one has {len(short)}")
        return ""
    return short
