"""Reviews that stress the tables: a 43-field checklist rubric, and long URLs with CJK and accents.

Files are written as JSON, which is YAML: what a user could have written by hand. The
lifecycle steps (adjudication, release, correction) go through the real CLI.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import REPO, copy_bundled

# A checklist in the style of published agentic-benchmark checklists: section letters,
# item numbers, one sentence per item (our own wording).
_TOPICS = [
    "the task set is released with a version identifier and a changelog",
    "every task states the exact success condition the grader checks",
    "the grader is tested against known-correct and known-wrong solutions",
    "ground-truth answers were verified by a second annotator",
    "the environment pins the versions of every tool the agent can call",
    "network access during evaluation is documented and justified",
    "the API keys and external services a run depends on are listed",
    "the time limit per task is stated and applied to every agent alike",
    "the token or step budget per task is stated",
    "the report gives the number of runs per task and how they were aggregated",
    "confidence intervals or standard errors accompany every headline number",
    "tasks that no agent or human can solve are identified and removed",
    "the share of tasks with an ambiguous specification is estimated",
    "shortcuts that pass the grader without solving the task are searched for",
    "the Python and system packages of the harness are pinned",
    "the container image used for grading is published",
    "state left by one task cannot reach the next task's grader",
    "contamination of the task set in pretraining data is discussed",
    "a human baseline is reported with its protocol",
    "the cost of one full evaluation run is reported",
]


def _checklist_fields(n: int) -> list[dict[str, Any]]:
    sections = ["o.a", "o.b", "t", "r", "g"]
    fields = []
    for index in range(n):
        section = sections[index % len(sections)]
        topic = _TOPICS[index % len(_TOPICS)]
        fields.append({
            "id": f"{section}.{index // len(sections) + 1}",
            "label": f"The documentation states that {topic}" + (" (API and Python versions included)"
                                                                   if index % 7 == 3 else ""),
            "revised": "1.0",
            "question": f"Does the documentation state that {topic}?",
            "codes": [1, 0, "NA"],
        })
    return fields


def checklist_rubric(n_fields: int = 43) -> dict[str, Any]:
    """A rubric of ``n_fields`` checklist items coded 1 (pass), 0 (fail) or NA."""
    return {
        "id": "checklist", "title": "Benchmark checklist", "version": "1.0",
        "codes": [
            {"id": 1, "label": "Pass", "definition": "The documentation satisfies the item.", "requires": ["source"]},
            {"id": 0, "label": "Fail", "definition": "The documentation does not satisfy the item.",
             "requires": ["source"]},
            {"id": "NA", "label": "Not applicable", "definition": "The item does not apply to this benchmark.",
             "requires": [], "role": "not-applicable"},
        ],
        "order": [0, 1],
        "fields": _checklist_fields(n_fields),
    }


_BENCHMARKS = ["WebArena", "WorkArena", "OSWorld", "SWE-bench Verified", "τ-bench", "ToolSandbox",
               "TheAgentCompany", "RE-Bench", "Cybench", "AgentCanary"]


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _slug(name: str) -> str:
    from protocoder.model import slugify

    return slugify(name)


def wide_review(root: Path, *, n_fields: int = 43, seed: int = 7) -> Path:
    """Review (b): a 43-field checklist, numeric code ids and NA, 10 protocols, 2 reviewers who disagree."""
    rubric = checklist_rubric(n_fields)
    root.mkdir(parents=True)
    _write(root / "protocoder.yaml", {"title": "Checklist review of ten agent benchmarks", "rubric": "checklist",
                                      "order": [_slug(name) for name in _BENCHMARKS]})
    _write(root / "rubric" / "checklist.yaml", rubric)
    shutil.copy2(REPO / "references.bib", root / "references.bib")
    rng = random.Random(seed)
    for name in _BENCHMARKS:
        pid = _slug(name)
        _write(root / "protocols" / pid / "protocol.yaml",
               {"id": pid, "name": name, "cites": [], "sources": [
                   {"title": f"{name} paper", "url": f"https://example.org/{pid}", "version": "v1",
                    "accessed": "2026-08-15"}]})
        first: dict[str, Any] = {}
        second: dict[str, Any] = {}
        for fld in rubric["fields"]:
            code = rng.choices(["1", "0", "NA"], weights=[5, 4, 1])[0]
            other = code if rng.random() < 0.8 else rng.choice([c for c in ("1", "0", "NA") if c != code])
            for cells, value in ((first, code), (second, other)):
                cells[fld["id"]] = {"code": value, "source": f"Paper Sec. {rng.randint(1, 9)}",
                                    "basis": "" if value == "NA" else "The paper says so in one sentence.",
                                    "rubric_version": "1.0", "coded_at": "2026-08-15"}
        _write(root / "protocols" / pid / "codes" / "ada.yaml", {"cells": first})
        _write(root / "protocols" / pid / "codes" / "ben.yaml", {"cells": second})
    return root


_LONG_URL = ("https://github.com/example-organisation/an-agent-benchmark-with-a-long-name/blob/"
             "0123456789abcdef0123456789abcdef01234567/src/evaluation/harness/teardown_and_reset.py")
_BIB = """
@article{wang2025cjk,
  author = {王小明 and Müller, Jürgen and Ōtsuka, Hana and Dvořák, Antonín},
  title = {τ²-bench: 中文 tasks for agents, évaluées avec soin},
  journal = {Journal of Agent Evaluation},
  year = {2025},
  url = {https://example.org/a/very/long/path/that/does/not/break/by/itself/because/it/has/no/spaces/at/all/2025}
}

@misc{gaia2025faq,
  author = {Ñúñez, José and 山田太郎},
  title = {Leaderboard FAQ},
  howpublished = {huggingface.co/spaces/gaia-benchmark/leaderboard},
  year = {2025},
  url = {https://huggingface.co/spaces/gaia-benchmark/leaderboard/discussions/1234567890?tab=faq#section-reset}
}
"""


def multilingual_review(root: Path, cli: Callable[..., Any]) -> Path:
    """Review (c): long unbroken URLs in sources, CJK and accented names, an adjudication, a release, a correction."""
    copy_bundled(root)
    with (root / "references.bib").open("a", encoding="utf-8") as bib:
        bib.write(_BIB)
    names = {"webarena": "τ²-bench (Café 中文)", "workarena": "日本語ベンチ・エージェント評価",
             "osworld": "Ångström–Œuvre Ærø Benchmark"}
    for pid, name in names.items():
        path = root / "protocols" / pid / "protocol.yaml"
        text = path.read_text(encoding="utf-8")
        old = next(line for line in text.splitlines() if line.startswith("name:"))
        path.write_text(text.replace(old, f"name: {json.dumps(name, ensure_ascii=False)}"), encoding="utf-8")
    sheet = root / "protocols" / "webarena" / "codes" / "casheekar.yaml"
    text = sheet.read_text(encoding="utf-8")
    text = text.replace("source: Paper Sec. 3.2 and App. A.9",
                        "source: leaderboard FAQ (huggingface.co/spaces/gaia-benchmark/leaderboard/discussions/"
                        "1234567890)")
    text = text.replace("cites: [zhou2024webarena]", "cites: [zhou2024webarena, wang2025cjk, gaia2025faq]", 1)
    text = text.replace("basis: >-", f"basis: >-\n      The teardown script ({_LONG_URL}) and 中文说明 say so.", 2)
    sheet.write_text(text, encoding="utf-8")
    # A second reviewer who disagrees on some cells and writes long URLs and CJK into a basis.
    for pid in ("webarena", "workarena", "osworld", "swe-bench", "tau-bench"):
        source = root / "protocols" / pid / "codes" / "casheekar.yaml"
        target = source.with_name("dana.yaml")
        text = source.read_text(encoding="utf-8")
        if pid in ("webarena", "osworld"):
            text = text.replace("code: NR", "code: P", 1)
        text = text.replace("basis: >-", f"basis: >-\n      See {_LONG_URL} and 说明文档（中文）for the reset step.",
                            1)
        target.write_text(text, encoding="utf-8")
    result = cli("adjudicate", "--workspace", root, "--cell", "webarena/open_work", "--code", "NR",
                 "--reason", "Nothing in the sources says what happens to work in flight; NR.", "--by", "dana")
    assert result.exit_code == 0, result.stderr
    result = cli("freeze", "--workspace", root, "--label", "v1", "--by", "dana", "--allow-unresolved",
                 "--bootstrap", "0")
    assert result.exit_code == 0, result.stderr
    result = cli("correct", "--workspace", root, "--cell", "cybench/open_work", "--code", "P",
                 "--reason", f"The harness notes at {_LONG_URL} were missed.", "--by", "dana")
    assert result.exit_code == 0, result.stderr
    return root
