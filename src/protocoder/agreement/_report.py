"""Result types of the agreement engine and their JSON, CSV-row and terminal renderings."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field, replace
from typing import Any

COEFFICIENT_NAMES: tuple[str, ...] = (
    "percent_agreement",
    "cohen_kappa",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "fleiss_kappa",
    "krippendorff_alpha",
    "gwet_ac1",
    "brennan_prediger",
)
EVIDENCE_NAMES: tuple[str, ...] = ("same_source", "same_cites", "same_source_and_cites")

_LABELS: dict[str, str] = {
    "percent_agreement": "percent agreement",
    "cohen_kappa": "Cohen's kappa",
    "cohen_kappa_linear": "Cohen's kappa, linear",
    "cohen_kappa_quadratic": "Cohen's kappa, quadratic",
    "fleiss_kappa": "Fleiss' kappa",
    "krippendorff_alpha": "Krippendorff's alpha",
    "gwet_ac1": "Gwet's AC1",
    "brennan_prediger": "Brennan-Prediger",
    "same_source": "same source",
    "same_cites": "same cites",
    "same_source_and_cites": "same source and cites",
    "quote_overlap": "quoted passages overlap",
}


@dataclass(frozen=True)
class Coefficient:
    """One estimate: ``value`` is None when undefined, and ``note`` then says why.

    ``ci_low``/``ci_high`` bound the 95% percentile bootstrap interval over units; they are
    None when no bootstrap was asked for or the value is undefined.
    """

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The ``{value, ci_low, ci_high, note}`` mapping used in the JSON report."""
        return {
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "note": self.note,
        }


@dataclass(frozen=True)
class ConfusionMatrix:
    """Cross-tabulation of two raters over the units both rated in one group.

    Rows are ``rater_a``'s codes and columns ``rater_b``'s, both in ``categories`` order.
    """

    rater_a: str
    rater_b: str
    categories: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]
    n_units: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping with the matrix as a list of rows."""
        return {
            "rater_a": self.rater_a,
            "rater_b": self.rater_b,
            "categories": list(self.categories),
            "n_units": self.n_units,
            "matrix": [list(row) for row in self.counts],
        }


@dataclass(frozen=True, init=False)
class Disagreement:
    """A unit whose raters did not all give the same code; ``codes`` maps rater to code."""

    group: str
    unit: str
    codes: dict[str, str]

    def __init__(self, group: str, unit: str, codes: dict[str, str]) -> None:
        # A report can hold one per unit: filling the instance dict directly is twice as
        # fast as the three object.__setattr__ calls of a frozen dataclass's own __init__.
        fields = self.__dict__
        fields["group"], fields["unit"], fields["codes"] = group, unit, codes

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {"group": self.group, "unit": self.unit, "codes": dict(self.codes)}


@dataclass(frozen=True)
class GroupResult:
    """Agreement within one group (or pooled over all groups, named ``all``)."""

    group: str
    n_units: int
    n_raters: int
    n_units_paired: int
    n_ratings: int
    raters: tuple[str, ...]
    code_counts: dict[str, int]
    coefficients: dict[str, Coefficient]
    specific_agreement: dict[str, Coefficient]
    evidence: dict[str, Coefficient]
    confusion: tuple[ConfusionMatrix, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping of this group's results."""
        return {
            "group": self.group,
            "n_units": self.n_units,
            "n_raters": self.n_raters,
            "n_units_paired": self.n_units_paired,
            "n_ratings": self.n_ratings,
            "raters": list(self.raters),
            "code_counts": dict(self.code_counts),
            "coefficients": {k: c.to_dict() for k, c in self.coefficients.items()},
            "specific_agreement": {k: c.to_dict() for k, c in self.specific_agreement.items()},
            "evidence": {k: c.to_dict() for k, c in self.evidence.items()},
            "confusion": [m.to_dict() for m in self.confusion],
        }


@dataclass(frozen=True)
class AgreementReport:
    """Everything :func:`compute_agreement` found.

    ``groups`` lists the per-group results first, then the pooled group ``all``;
    ``disagreements`` every unit whose raters differ; ``settings`` the options used;
    ``notes`` remarks on the whole report (e.g. categories inferred from the data).
    """

    groups: list[GroupResult]
    disagreements: list[Disagreement]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def group(self, name: str) -> GroupResult:
        """The result for group ``name`` (``"all"`` for the pooled one); KeyError if absent."""
        for g in self.groups:
            if g.group == name:
                return g
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable mapping (no NaN anywhere: undefined values are None)."""
        return {
            "groups": [g.to_dict() for g in self.groups],
            "disagreements": [d.to_dict() for d in self.disagreements],
            "settings": dict(self.settings),
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON text (no NaN), with one disagreement per line.

        The disagreements can run to one per unit; written compactly, one to a line, they
        stay readable and are encoded by the json module's C encoder, not its indenting
        Python one (the same data as ``json.dumps(report.to_dict(), indent=2)``).
        """
        import json

        parts = []
        for key, value in self.to_dict().items():
            if key == "disagreements" and value:
                text = "[\n" + ",\n".join("    " + json.dumps(item, ensure_ascii=False, allow_nan=False)
                                           for item in value) + "\n  ]"
            else:
                text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n  ")
            parts.append(f"  {json.dumps(key)}: {text}")
        return "{\n" + ",\n".join(parts) + "\n}"

    def to_rows(self) -> list[dict[str, Any]]:
        """Flat rows (group, coefficient, value, ci_low, ci_high, note, counts) for a CSV.

        Specific agreement appears as ``specific_agreement:<code>`` and evidence agreement
        as ``evidence:<measure>``.
        """
        rows: list[dict[str, Any]] = []
        for g in self.groups:
            named: list[tuple[str, Coefficient]] = list(g.coefficients.items())
            named += [(f"specific_agreement:{k}", c) for k, c in g.specific_agreement.items()]
            named += [(f"evidence:{k}", c) for k, c in g.evidence.items()]
            for name, c in named:
                rows.append(
                    {
                        "group": g.group,
                        "coefficient": name,
                        "value": c.value,
                        "ci_low": c.ci_low,
                        "ci_high": c.ci_high,
                        "note": c.note,
                        "n_units": g.n_units,
                        "n_units_paired": g.n_units_paired,
                        "n_raters": g.n_raters,
                    }
                )
        return rows

    def format_table(self) -> str:
        """A fixed-width plain-text report for a terminal.

        An overview puts each group's code distribution next to its coefficients (so a low
        kappa beside a high percent agreement can be read as skew), then each group gets a
        block with 95% intervals, specific and evidence agreement; notes come last.
        """
        return _format(self)

    def format_summary(self, next_steps: list[tuple[str, str]] | None = None) -> str:
        """The terminal's default report, in one screen (see :func:`format_summary`)."""
        return format_summary(self, next_steps)


def _num(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.3f}"


def _ci(c: Coefficient) -> str:
    if c.ci_low is None or c.ci_high is None:
        return ""
    return f"[{c.ci_low:.3f}, {c.ci_high:.3f}]"


def _distribution(g: GroupResult) -> str:
    return " · ".join(f"{code} {n}" for code, n in g.code_counts.items()) or "-"


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: list[str]) -> str:
        out = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return "  ".join(out).rstrip()

    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def _format(report: AgreementReport) -> str:
    s = report.settings
    notes: list[str] = []

    def ref(note: str) -> str:
        note = "; ".join(kept_note(note, int(s.get("bootstrap") or 0)))
        if not note:
            return ""
        if note not in notes:
            notes.append(note)
        return f"[{notes.index(note) + 1}]"

    out: list[str] = ["Inter-rater agreement"]
    order = s.get("order")
    declared = "declared" if s.get("categories_declared") else "observed, not declared"
    out.append(f"  categories ({declared}): {', '.join(s.get('categories', [])) or '-'}")
    out.append(
        "  order: "
        + (" < ".join(order) if order else "none (codes are not ordered)")
        + f"   not applicable ({s.get('na_code') or 'none declared'}): "
        + ("an ordinary category" if s.get("na") == "category" else "excluded")
    )
    if s.get("bootstrap"):
        out.append(
            f"  95% percentile bootstrap intervals over units: {s['bootstrap']} resamples, "
            f"seed {s.get('seed')}"
        )
    else:
        out.append("  no bootstrap: point estimates only")
    out.append("")

    overview_cols = [
        ("p_a", "percent_agreement"),
        ("Cohen", "cohen_kappa"),
        ("Fleiss", "fleiss_kappa"),
        ("alpha", "krippendorff_alpha"),
        ("AC1", "gwet_ac1"),
        ("BP", "brennan_prediger"),
    ]
    header = ["group", "units", "paired", "raters", "codes"] + [h for h, _ in overview_cols]
    rows = []
    for g in report.groups:
        row = [g.group, str(g.n_units), str(g.n_units_paired), str(g.n_raters), _distribution(g)]
        row += [_num(g.coefficients[k].value) for _, k in overview_cols if k in g.coefficients]
        rows.append(row)
    out += _table(header, rows, right={1, 2, 3, 5, 6, 7, 8, 9, 10})
    out.append("units: all units; paired: units with two or more ratings; p_a: percent agreement; Cohen: Cohen's "
               "kappa; Fleiss: Fleiss' kappa; alpha: Krippendorff's alpha; AC1: Gwet's AC1; BP: Brennan-Prediger")

    for g in report.groups:
        out.append("")
        out.append(
            f"{g.group}: {g.n_units} units ({g.n_units_paired} with two or more ratings), "
            f"{g.n_raters} raters, {g.n_ratings} ratings; codes {_distribution(g)}"
        )
        rows = []
        for k, c in g.coefficients.items():
            label = _LABELS.get(k, k)
            if k == "krippendorff_alpha" and s.get("level") == "ordinal":
                label += ", ordinal"
            rows.append([label, _num(c.value), _ci(c), ref(c.note)])
        for code, c in g.specific_agreement.items():
            rows.append([f"specific agreement {code}", _num(c.value), _ci(c), ref(c.note)])
        evidence_data = s.get("evidence_data") or {}
        shown = g.evidence.items() if any(evidence_data.values()) else ()
        for k, c in shown:
            rows.append([f"evidence: {_LABELS.get(k, k)}", _num(c.value), _ci(c), ref(c.note)])
        out += ["  " + line for line in _table(["measure", "value", "95% CI", "note"], rows, {1})]

    if report.notes or notes:
        out.append("")
        out.append("Notes")
        out += [f"  - {n}" for n in report.notes]
        out += [f"  [{i}] {n}" for i, n in enumerate(notes, start=1)]
    return "\n".join(out) + "\n"


MIN_INTERVAL_UNITS = 10
"""Below this many units (coded by two or more raters) a group's intervals are withheld from the
terminal summary and flagged in the tables: a bootstrap over so few units draws few distinct
resamples, and its 95% interval is too coarse to read (it often collapses onto the estimate)."""
FEW_UNITS_NOTE = (f"fewer than {MIN_INTERVAL_UNITS} cells coded by two or more reviewers: a bootstrap over so few "
                  "draws too few distinct resamples for a 95% interval to mean much")
DROPPED_SHARE = 0.05
"""Resamples left out of an interval (the coefficient undefined in them) are worth a note only from
this share of the bootstrap on."""
SHOWN_DISAGREEMENTS = 12
"""The terminal summary lists at most this many disagreeing cells (``--format md`` lists all)."""


def main_coefficients(report: AgreementReport) -> list[tuple[str, str]]:
    """(key, header) of the coefficients the terminal summary shows: percent agreement, Cohen's κ for
    two raters (Fleiss' κ for more), and Krippendorff's α."""
    pooled = report.groups[-1] if report.groups else None
    chance = "cohen_kappa" if pooled is None or pooled.n_raters <= 2 else "fleiss_kappa"
    alpha = "Kripp. α" + (" (ord.)" if report.settings.get("level") == "ordinal" else "")
    return [("percent_agreement", "percent agreement"),
            (chance, "Cohen's κ" if chance == "cohen_kappa" else "Fleiss' κ"), ("krippendorff_alpha", alpha)]


def _short_ci(c: Coefficient) -> str:
    if c.ci_low is None or c.ci_high is None:
        return ""
    return f"[{c.ci_low:.2f}, {c.ci_high:.2f}]".replace("-", "−")


def kept_note(note: str, bootstrap: int) -> list[str]:
    """The parts of a coefficient's note worth printing: a count of resamples left out of its interval
    only when it is at least :data:`DROPPED_SHARE` of the bootstrap."""
    kept = []
    for part in filter(None, note.split("; ")):
        words = part.split(" ", 3)
        if (len(words) > 3 and words[1] == "of" and words[3].startswith("bootstrap resamples dropped")
                and int(words[0]) < DROPPED_SHARE * (bootstrap or int(words[2]))):
            continue
        kept.append(part)
    return kept


def format_summary(report: AgreementReport, next_steps: list[tuple[str, str]] | None = None) -> str:
    """The terminal's default report, to read in one screen: units and the main coefficients per
    field with their intervals (withheld below :data:`MIN_INTERVAL_UNITS` units, saying why), the
    disagreeing cells with each rater's code, then what to run next (``next_steps``: command, why)."""
    s = report.settings
    bootstrap = int(s.get("bootstrap") or 0)
    pooled = report.groups[-1] if report.groups else None
    raters = list(pooled.raters) if pooled else []
    who = "reviewer" if s.get("rubric") else "rater"  # a workspace's raters are its reviewers
    out = [f"Agreement of {len(raters)} {who if len(raters) == 1 else who + 's'}"
           + (f" ({', '.join(raters)})" if raters and len(raters) <= 4 else "")
           + (f": {pooled.n_units_paired} of {pooled.n_units} cells coded by "
              f"{'both' if len(raters) == 2 else 'two or more'}" if pooled else "")]
    if s.get("na_code"):
        out.append(f"  not applicable ({s.get('na_code')}): "
                   + ("an ordinary category" if s.get("na") == "category" else "excluded"))
    out.append("")
    shown = main_coefficients(report)
    notes: list[str] = []
    withheld = False

    def mark(c: Coefficient) -> str:
        letters = []
        for part in kept_note(c.note, bootstrap):
            if part not in notes:
                notes.append(part)
            letters.append(chr(ord("a") + notes.index(part)))
        return ",".join(letters)

    rows: list[list[str]] = []
    for g in report.groups:
        name = "all fields" if g.group == "all" else g.group
        few = bool(bootstrap) and g.n_units_paired < MIN_INTERVAL_UNITS
        withheld |= few
        values, intervals = [], []
        for key, _ in shown:
            c = g.coefficients.get(key)
            if c is None:
                values.append("–")
                intervals.append("")
                continue
            # A withheld interval needs no word on the resamples left out of it.
            letters = mark(replace(c, note="; ".join(p for p in c.note.split("; ") if "resamples" not in p))
                           if few else c)
            values.append(_num(c.value) + (f" ({letters})" if letters else ""))
            intervals.append("" if few else _short_ci(c))
        rows.append([name + (" *" if few else ""), str(g.n_units_paired), *values])
        if any(intervals):
            rows.append(["", "", *intervals])
    width = [max(len(h), *(len(r[i]) for r in rows)) for i, h in
             enumerate(["field", "cells", *(h for _, h in shown)])]
    header = ["field", "cells", *(h for _, h in shown)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(width[i]) if i == 0 else c.rjust(width[i]) for i, c in enumerate(cells)).rstrip()

    out += [line(header)] + [line(r) for r in rows]
    legend = []
    if bootstrap:
        legend.append(f"Below each value: its 95% interval (bootstrap, {bootstrap} resamples, seed {s.get('seed')}).")
    else:
        legend.append("Point estimates only (--bootstrap 0).")
    if withheld:
        legend.append(f"* No interval: {FEW_UNITS_NOTE}.")
    legend += [f"({chr(ord('a') + i)}) {n[:1].upper() + n[1:]}." for i, n in enumerate(notes)]
    out += [wrapped for text in legend for wrapped in textwrap.wrap(text, 80, subsequent_indent="  ")]

    out.append("")
    if report.disagreements:
        listed = report.disagreements[:SHOWN_DISAGREEMENTS]
        every = sorted({r for d in report.disagreements for r in d.codes})
        out.append(f"Disagreements ({len(report.disagreements)} "
                   f"{'cell' if len(report.disagreements) == 1 else 'cells'}):")
        table = [["protocol", "field", *every]]
        for d in listed:
            protocol = d.unit.removesuffix(f"/{d.group}") if d.unit.endswith(f"/{d.group}") else d.unit
            table.append([protocol, d.group if d.group != "all" else "", *(
                d.codes.get(r, "–") for r in every)])
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        out += ["  " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip() for row in table]
        if len(report.disagreements) > len(listed):
            out.append(f"  … and {len(report.disagreements) - len(listed)} more (--format md lists every one)")
    elif pooled is not None and pooled.n_units_paired:
        out.append("No disagreements: every cell coded by two or more has one code.")
    if next_steps:
        out += ["", "Next:"]
        width_cmd = max(len(cmd) for cmd, _ in next_steps)
        out += [f"  {cmd.ljust(width_cmd)}  {why}" for cmd, why in next_steps]
    out[0:1] = textwrap.wrap(out[0], 80, subsequent_indent="  ")
    return "\n".join(out) + "\n"
