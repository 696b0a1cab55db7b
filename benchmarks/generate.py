"""A seeded generator of synthetic reviews, written as a real protocoder workspace.

``generate(root, protocols=N, fields=F, reviewers=R, seed=S)`` starts from
``protocoder init`` (the bundled rubric, an empty bibliography) and then writes, as
plain YAML text (much faster than going through the store, and exactly the formats the
README documents):

* ``protocoder.yaml``: the title, the rubric and every protocol in ``order`` (as
  ``protocol add`` leaves it);
* ``references.bib``: one entry per protocol (its paper) plus two shared audit reports;
* ``protocols/<id>/protocol.yaml``: a name, one or two citation keys, one or two pinned
  sources;
* ``protocols/<id>/codes/<reviewer>.yaml``: every field coded by every reviewer, with a
  source location, a basis of a few hundred characters of inline Markdown (emphasis,
  code, links), citation keys, ``rubric_version`` and ``coded_at``; the first reviewer
  also answers two of the rubric's prompts.

Codes are skewed like the paper's ten protocols (reset or retention mostly E, open work
mostly NR, separate evidence mostly P); each further reviewer copies the first
reviewer's code with probability ``agree`` (default 0.85) and otherwise picks any code
the field allows, so there is some disagreement. With ``fields`` other than 3 the
bundled rubric is extended (or cut) to that many fields; with ``checklist=True``
(``--checklist``) it is replaced by a checklist of ``fields`` items with ids like a published
benchmark checklist's (``o.a.1`` … ``r.10`` for 43), codes ``1``, ``0`` and ``NA`` (not applicable)
and item-length labels: the many-fields shape of issue 15.

Run as a script to make one workspace: ``python benchmarks/generate.py DIR --protocols 1000``.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import textwrap
from pathlib import Path

from protocoder.scaffold import init_workspace

DEFAULT_REVIEWERS = ("alice", "bob", "carol")

# Code distributions per bundled field: (code, weight). Extra fields use the last one.
SKEW = {
    "open_work": [("NR", 0.6), ("P", 0.2), ("NA", 0.15), ("E", 0.05)],
    "reset_retention": [("E", 0.8), ("P", 0.18), ("NR", 0.02)],
    "separate_evidence": [("P", 0.65), ("E", 0.3), ("NR", 0.05)],
}
EXTRA_SKEW = [("E", 0.4), ("P", 0.4), ("NR", 0.2)]

_PROSE = (
    "the paper states that each task runs in a fresh container and the harness removes it after grading "
    "while the appendix describes a snapshot of the virtual machine restored before every episode but "
    "no source says whether background processes started by the agent are stopped before the checker "
    "reads the final state of the environment and the official documentation mentions a timeout per "
    "instance without naming the services it covers so a later run could observe files or accounts "
    "left behind by an earlier one unless the database is reinitialised"
)
WORDS = _PROSE.split(" ")
SOURCES = ("Paper Sec. {a}.{b}", "Paper App. {L}.{a} and official harness documentation",
           "Paper Secs. {a}–{b}", "ABC report, T.{a}", "README of the official repository, section {L}")


def basis_text(rng: random.Random, index: int) -> str:
    """A few hundred characters of prose with inline Markdown."""
    words = [rng.choice(WORDS) for _ in range(rng.randint(40, 70))]
    words[0] = words[0].capitalize()
    spots = rng.sample(range(2, len(words) - 2), 3)
    words[spots[0]] = f"*{words[spots[0]]}*"
    words[spots[1]] = f"`--{words[spots[1]]}`"
    words[spots[2]] = f"[{words[spots[2]]}](https://example.org/docs/{index}#s{spots[2]})"
    if rng.random() < 0.3:
        words.insert(rng.randint(2, len(words) - 1), "**not**")
    if rng.random() < 0.2:
        words.insert(rng.randint(2, len(words) - 1), "(τ ≤ 0.5 & 50%)")
    return " ".join(words) + "."


def _folded(text: str, indent: int) -> str:
    """``>-`` block lines for text without newlines (folding gives back the same text)."""
    pad = " " * indent
    lines = textwrap.wrap(text, width=88, break_long_words=False, break_on_hyphens=False)
    return ">-\n" + "\n".join(pad + line for line in lines)


def _q(text: str) -> str:
    # A JSON string is a valid YAML double-quoted scalar.
    return json.dumps(text, ensure_ascii=False)


def _pick(rng: random.Random, weighted: list[tuple[str, float]]) -> str:
    return rng.choices([c for c, _ in weighted], weights=[w for _, w in weighted])[0]


def _rubric_fields(root: Path, fields: int) -> list[tuple[str, tuple[str, ...]]]:
    """Adjust the bundled rubric to ``fields`` fields; return (id, allowed codes) of each."""
    from protocoder.storage.yamlio import load_document

    path = root / "rubric" / "evaluation-boundary.yaml"
    document = load_document(path, "rubric")
    items = document.data["fields"]
    if fields != len(items):
        template = items[-1]
        del items[fields:]
        for number in range(len(items), fields):
            extra = type(template)()
            for key, value in template.items():
                if key != "decision":
                    # A copy, not the same object: a shared one would be saved as a YAML alias.
                    extra[key] = copy.deepcopy(value)
            extra["id"] = f"extra_{number + 1}"
            extra["label"] = f"Extra field {number + 1}"
            items.append(extra)
        document.save()
    return [(str(item["id"]), tuple(str(c) for c in item["codes"])) for item in items]


CHECKLIST_SECTIONS = ("o.a", "o.b", "t", "r")


def checklist_field_ids(fields: int) -> list[str]:
    """Ids like a published benchmark checklist's items: o.a.1 … o.b.1 … t.1 … r.1 …"""
    per = -(-fields // len(CHECKLIST_SECTIONS))
    ids = [f"{section}.{n}" for section in CHECKLIST_SECTIONS for n in range(1, per + 1)]
    return ids[:fields]


def _checklist_rubric(root: Path, fields: int) -> list[tuple[str, tuple[str, ...]]]:
    """Replace the bundled rubric by a checklist: ``fields`` items, each coded 1 (pass),
    0 (fail) or NA, with item-length labels, as in issue 13's 43-item checklist."""
    ids = checklist_field_ids(fields)
    lines = ["id: evaluation-boundary", "title: Agentic benchmark checklist", 'version: "1.0"', "codes:",
             "  - {id: '1', label: Pass, definition: The item is satisfied by the documentation.}",
             "  - {id: '0', label: Fail, definition: The item is not satisfied by the documentation.}",
             "  - {id: NA, label: Not applicable, definition: The item does not apply to this benchmark.,"
             " role: not-applicable}",
             "order: ['0', '1']", "fields:"]
    for number, fid in enumerate(ids, start=1):
        label = (f"Item {number}: the benchmark documents how its tasks, environment and grader handle "
                 f"aspect {number} of the evaluation")
        lines += [f"  - id: {fid}", f"    label: {_q(label)}", f"    short: Item {number}",
                  f"    question: {_q(f'Does the documentation satisfy checklist item {fid}?')}",
                  "    codes: ['1', '0', NA]"]
    (root / "rubric" / "evaluation-boundary.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [(fid, ("1", "0", "NA")) for fid in ids]


CHECKLIST_SKEW = [("1", 0.55), ("0", 0.3), ("NA", 0.15)]


def generate(root: Path, *, protocols: int, fields: int = 3, reviewers: int | tuple[str, ...] = 3,
             seed: int = 20260815, agree: float = 0.85, checklist: bool = False) -> dict[str, int]:
    """Write a synthetic workspace into ``root`` (which must not exist or be empty).

    ``checklist`` replaces the bundled rubric by a checklist of ``fields`` items coded
    ``1``/``0``/``NA`` (the many-fields shape); otherwise the bundled rubric is extended
    or cut to ``fields`` fields.
    """
    rng = random.Random(seed)
    names = DEFAULT_REVIEWERS[:reviewers] if isinstance(reviewers, int) else tuple(reviewers)
    if isinstance(reviewers, int) and reviewers > len(DEFAULT_REVIEWERS):
        names = tuple(f"r{i + 1}" for i in range(reviewers))
    init_workspace(root, title=f"Synthetic review of {protocols} protocols")
    field_list = _checklist_rubric(root, fields) if checklist else _rubric_fields(root, fields)
    ids = [f"bench-{i:05d}" for i in range(protocols)]

    bib = ["@misc{audit2025checklist,\n  author = {Doe, Jane and Roe, Richard},\n"
           "  title = {A checklist for agentic benchmarks},\n  year = {2025}\n}\n",
           "@misc{audit2026report,\n  author = {{Evaluation Audit Group}},\n"
           "  title = {Audit report of agent benchmarks},\n  year = {2026}\n}\n"]
    for i, pid in enumerate(ids):
        bib.append(f"@inproceedings{{{pid.replace('-', '')},\n  author = {{Author{i}, Ada and Coauthor, Bo}},\n"
                   f"  title = {{Benchmark {i}: agents in realistic environments}},\n"
                   f"  booktitle = {{Proceedings of a Conference}},\n  year = {{{2020 + i % 7}}}\n}}\n")
    (root / "references.bib").write_text("\n".join(bib), encoding="utf-8")
    # As init and "protocol add" leave it: every protocol listed in the display order.
    (root / "protocoder.yaml").write_text(
        f"title: Synthetic review of {protocols} protocols\nrubric: evaluation-boundary\norder:\n"
        + "".join(f"  - {pid}\n" for pid in ids), encoding="utf-8")

    cells = 0
    for i, pid in enumerate(ids):
        own = pid.replace("-", "")
        cites = [own] + (["audit2025checklist"] if i % 3 == 0 else [])
        folder = root / "protocols" / pid
        (folder / "codes").mkdir(parents=True)
        sources = [f"  - title: {_q(f'Benchmark {i}: agents in realistic environments')}\n"
                   f"    url: https://example.org/papers/{i}\n    version: arXiv v{1 + i % 3}\n"
                   "    accessed: 2026-08-15\n"]
        if i % 4 == 0:
            sources.append(f"  - title: Official harness documentation\n    url: https://example.org/repo/{i}\n"
                           f"    version: commit {rng.getrandbits(40):010x}\n    accessed: 2026-08-16\n")
        (folder / "protocol.yaml").write_text(
            f"# Benchmark {i}: metadata and the public sources reviewed for it.\nid: {pid}\n"
            f"name: {_q(f'Bench-{i}' if i % 10 else f'τ-bench {i}')}\ncites: [{', '.join(cites)}]\n"
            "sources:\n" + "".join(sources), encoding="utf-8")
        truth = {fid: _pick(rng, CHECKLIST_SKEW if checklist else SKEW.get(fid, EXTRA_SKEW))
                 for fid, _ in field_list}
        for r_index, reviewer in enumerate(names):
            lines = [f"# Cells coded by {reviewer} for {pid}.", "cells:"]
            for fid, allowed in field_list:
                code = truth[fid]
                if r_index and rng.random() > agree:
                    code = rng.choice(allowed)
                source = rng.choice(SOURCES).format(a=rng.randint(1, 9), b=rng.randint(1, 9),
                                                    L=rng.choice("ABCD"))
                cell_cites = cites if code != "NA" or rng.random() < 0.5 else []
                lines += [f"  {fid}:", f"    code: {code}", f"    source: {_q(source)}",
                          f"    basis: {_folded(basis_text(rng, i), 6)}"]
                if cell_cites:
                    lines.append(f"    cites: [{', '.join(cell_cites)}]")
                lines += ['    rubric_version: "1.0"', "    coded_at: 2026-08-15"]
                cells += 1
            if r_index == 0:
                lines += ["notes:", f"  run_unit: {_q(f'One task instance of benchmark {i} in its own container.')}",
                          f"  stop_rule: {_folded(basis_text(rng, i), 4)}"]
            (folder / "codes" / f"{reviewer}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"protocols": protocols, "fields": len(field_list), "reviewers": len(names), "cells": cells}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--protocols", type=int, default=100)
    parser.add_argument("--fields", type=int, default=3)
    parser.add_argument("--reviewers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20260815)
    parser.add_argument("--checklist", action="store_true", help="a checklist rubric of --fields items coded 1/0/NA")
    args = parser.parse_args()
    counts = generate(args.directory, protocols=args.protocols, fields=args.fields, reviewers=args.reviewers,
                      seed=args.seed, checklist=args.checklist)
    print(f"{args.directory}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
