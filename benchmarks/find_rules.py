"""Each rule of ``protocoder find``'s ranking switched off, on every keyed set, and what it did on the sets that
came after it.

Every rule was chosen on the sets seen when it was made (round N) and has since met sets nobody had seen then
(:data:`RULES` names the first). Its gain on those later sets is an out-of-sample measure of the rule itself,
which a gain on the sets it was chosen on is not. A diagnostic beside ``find_real.py`` (same documents, key, hit
rule and warm quotes); it switches a rule off by setting the constants of ``protocoder.evidence.search`` that
hold it, and restores them after.

For each rule: the key passages ``find`` has in its top 10 with the rule minus without it, cold / warm, on the
sets it was chosen on and on the sets after it, and per set (``*``: a set after the rule); and the points of
non-evidence in the top 10 (cold) the rule saves (negative: fewer with the rule).

Run: ``python benchmarks/find_rules.py [--sets real-docs,heldout2,…]`` (all keyed sets by default).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

import find_real  # noqa: E402


@dataclass(frozen=True)
class Rule:
    """One rule of the ranking, how to switch it off, and the first set that was unseen when it was chosen."""

    name: str
    first_after: str
    switch_off: Callable[[], dict[tuple[object, str], object]]
    """Returns {(module, constant): value without the rule}."""


def _search_modules() -> tuple[object, object]:
    from protocoder.evidence.search import query, ranking

    return ranking, query


def _kinds_off(**factors: float) -> dict[tuple[object, str], object]:
    ranking, _ = _search_modules()
    return {(ranking, "KIND_WEIGHTS"): {**ranking.KIND_WEIGHTS, **factors}}


RULES = [
    Rule("code, comments and tables weigh 0.5 (rounds 2-3)", "heldout2",
         lambda: _kinds_off(code=1.0, comment=1.0, table=1.0)),
    Rule("install lines, contents, badges, licences, drawings weigh 0.1 (rounds 2-3)", "heldout2",
         lambda: _kinds_off(install=1.0, toc=1.0, badge=1.0, boilerplate=1.0, diagram=1.0)),
    Rule("code under a fifth of the best is floored (round 3)", "heldout2",
         lambda: {(_search_modules()[0], "CODE_FLOOR"): 0.0}),
    Rule("quoted words weigh by how many quotes share them (round 5)", "heldout3",
         lambda: {(_search_modules()[1], "QUOTES_SHARING"): 1}),
    Rule("the best code block has a place in the top 10 (round 6)", "heldout4",
         lambda: {(_search_modules()[0], "BLOCK_SLOTS"): 0}),
    Rule("a setting or commented command sharing one word comes last (round 7)", "heldout5",
         lambda: {(_search_modules()[0], "SHARED_WORDS"): 0}),
    Rule("floored and deferred lines stay off the first 10 (rounds 8-9)", "heldout6",
         lambda: {(_search_modules()[0], "FLOOR_PLACES"): 0}),
    Rule("a table whose rows describe ranks as prose (round 10)", "heldout8",
         lambda: {**_kinds_off(reference=0.5),
                  (_search_modules()[0], "FLOORED_KINDS"): _search_modules()[0].FLOORED_KINDS | {"reference"}}),
]
"""The rules, oldest first. A file listing read whole (round 11) is left out: switching it off needs other
passages (it is decided where passages get their kinds), and no set after it holds a listing."""


@contextmanager
def switched(values: dict[tuple[object, str], object]) -> Iterator[None]:
    """The constants set to ``values`` for the duration, restored after (also on error)."""
    saved = {(module, name): getattr(module, name) for module, name in values}
    try:
        for (module, name), value in values.items():
            setattr(module, name, value)
        yield
    finally:
        for (module, name), value in saved.items():
            setattr(module, name, value)


def measure(loaded: dict[str, tuple[dict, list[str]]], rank, rubric) -> dict[tuple[str, bool], tuple[int, float]]:  # noqa: ANN001
    """Per (set, warm): key passages in find's top 10 and the share of non-evidence there."""
    found = {}
    for name, (documents, order) in loaded.items():
        for document in documents.values():
            document.index._kind_weights = None  # the kind factors are cached per index
        for warm in (False, True):
            row = find_real.evaluate(documents, order, order, rank, rubric, warm=warm)
            found[(name, warm)] = (round(row.recall[10] * row.total), row.non_evidence)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(find_real.SETS), help="comma-separated keyed sets")
    names = parser.parse_args().sets.split(",")
    from find_recall import load_rubric

    rubric = load_rubric()
    loaded = {}
    for name in names:
        folder, key_path = find_real.SETS[name]
        loaded[name] = (find_real.load_documents(folder, key_path), find_real.load_key(key_path)["order"])
    rank = find_real.methods(rubric)["protocoder find"]
    adopted = measure(loaded, rank, rubric)
    order = list(find_real.SETS)
    print("| rule | gain on its sets (cold / warm) | gain on the sets after it | per set: cold / warm, "
          "non-evidence points saved |\n|---|---:|---:|---|")
    for rule in RULES:
        with switched(rule.switch_off()):
            without = measure(loaded, rank, rubric)
        after = set(order[order.index(rule.first_after):])
        sums = {True: [0, 0], False: [0, 0]}
        cells = []
        for name in names:
            cold = adopted[(name, False)][0] - without[(name, False)][0]
            warm = adopted[(name, True)][0] - without[(name, True)][0]
            saved = (without[(name, False)][1] - adopted[(name, False)][1]) * 100
            sums[name in after][0] += cold
            sums[name in after][1] += warm
            cells.append(f"{name}{'*' if name in after else ''} {cold:+d} / {warm:+d}, {saved:+.0f}")
        print(f"| {rule.name} | {sums[False][0]:+d} / {sums[False][1]:+d} | {sums[True][0]:+d} / {sums[True][1]:+d} "
              f"| {'; '.join(cells)} |")


if __name__ == "__main__":
    main()
