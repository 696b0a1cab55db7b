"""`find`'s ranking on real documentation: what a reviewer sees in the top 10 of a short README.

Real documents from tests/data/real-docs (the dev set of benchmarks/find_real.py), unmodified.
"""

from __future__ import annotations

from pathlib import Path

from protocoder.evidence.extract import extract
from protocoder.evidence.search import PassageIndex, field_query, source_passages
from protocoder.evidence.search.ranking import CODE_FLOOR
from protocoder.storage.findings import Findings
from protocoder.storage.formats import parse_rubric
from protocoder.storage.yamlio import parse_yaml

REPO = Path(__file__).resolve().parents[2]
REAL_DOCS = REPO / "tests" / "data" / "real-docs"
SINGULARITY = "harbor/harbor/environments/singularity/README.md"
BOX = "│─┌┐└┘├┤┬┴┼"


def _rubric():  # noqa: ANN202
    path = REPO / "rubric" / "evaluation-boundary.yaml"
    text = path.read_text(encoding="utf-8")
    return parse_rubric(parse_yaml(text, str(path)), Findings(str(path), text))


def _index(name: str) -> PassageIndex:
    return PassageIndex.build(source_passages("readme", extract((REAL_DOCS / name).read_bytes(), "text/markdown")))


def test_a_box_drawing_is_a_diagram_not_code() -> None:
    index = _index(SINGULARITY)
    drawn = [p for p in index.passages if sum(p.text.count(c) for c in BOX) >= 2]
    assert drawn and {p.kind for p in drawn} == {"diagram"}


def test_the_top_ten_of_a_short_readme_is_not_filled_with_diagram_lines_and_weak_code() -> None:
    """The singularity README's architecture drawing (`│  - exec()  │  /exec  │`) held five of the ten
    open_work candidates; the passages that say what happens to the processes now rank without them."""
    index = _index(SINGULARITY)
    rubric = _rubric()
    for fld in rubric.fields:
        found = index.search(field_query(rubric, fld), 10)
        assert found
        assert not [c.text for c in found if sum(c.text.count(ch) for ch in BOX) >= 2], fld.id
        # the kinds as ranking reads them: the README's table of kwargs describes each one, a reference table
        kinds = {(p.start, p.end): p.kind for p in index.passages}
        weak = [c.text for c in found if kinds[(c.start, c.end)] in ("code", "comment", "install", "table")
                and c.score < CODE_FLOOR * found[0].score]
        assert weak == [], fld.id
    texts = [c.text for c in index.search(field_query(rubric, rubric.field("open_work")), 10)]
    assert any("kills the container at 95% of the configured limit" in t for t in texts)


def test_a_strong_code_match_is_still_listed() -> None:
    """The floor is relative: a command that matches the field well stays (evalplus: `docker run --rm`)."""
    index = _index("evalplus/README.md")
    rubric = _rubric()
    found = index.search(field_query(rubric, rubric.field("reset_retention")), 10)
    kinds = {(p.start, p.end): p.kind for p in index.passages}
    assert any(kinds[(c.start, c.end)] in ("code", "comment") and "--rm" in c.text for c in found)


FRESH_DOCS = REPO / "tests" / "data" / "real-docs-heldout"


def test_a_command_ranks_with_the_sentence_written_above_it() -> None:
    """OSWorld's README writes "Parallel execution (example showing switching provider to `docker`)" right
    above the command that sets ``--num_envs 10``: the parallel environments a reviewer cites for
    separate evidence. Cut apart, the command held one word of the field and was not listed; read with
    its sentence, as the author wrote the paragraph, it is in the top 10."""
    data = (FRESH_DOCS / "desktop-env" / "README.md").read_bytes()
    index = PassageIndex.build(source_passages("readme", extract(data, "text/markdown"), data.decode("utf-8")))
    rubric = _rubric()
    found = index.search(field_query(rubric, rubric.field("separate_evidence")), 10)
    assert any("--num_envs 10" in c.text and c.text.startswith("Parallel execution") for c in found)


def test_find_is_not_below_plain_bm25_over_paragraphs(monkeypatch) -> None:  # noqa: ANN001
    """Issue 29: never below plain BM25 over the raw file's blank-line paragraphs, on the keys of the three sets
    of real documents (benchmarks/find_real.py), and warm (five other documents' key passages as a reviewer's
    earlier quotes) recall@10 at least 0.80. Before round 5, find was below plain BM25 cold on the second set
    (code lines plain BM25 reached through the paragraph holding the sentence and its command) and warm on
    the first; before round 6, warm was 0.795 on the first set and 0.798 on the third (a line of the code block
    plain BM25 ranked first, not in find's top 10). Still below plain BM25: warm on the second set and cold on
    the third (see benchmarks/find_real_results.md), so those two are not asserted. The fourth set (unseen
    until round 6) was equal to plain BM25 at 10 cold and warm, above since round 7; the fifth (unseen until round
    7) equal cold and one key passage below warm; the sixth (unseen until round 8) above warm and three key
    passages below cold since round 10; the seventh (unseen until round 9, where find was 0.69 / 0.64 against
    0.73 / 0.77) above cold and three below warm since round 10's reference tables; the eighth (unseen, measured
    once after round 10: 0.56 / 0.64 against 0.58 / 0.67) below both, above cold since round 11's listings (0.60
    against 0.58), and the fifth above warm since then too; the ninth (unseen, measured once after round 11: 0.69 /
    0.73 against 0.71 / 0.77) below both; the tenth (unseen, measured once after round 11: 0.48 / 0.50 against
    0.59 / 0.64; 0.44 / 0.47 against 0.50 / 0.54 once both read its CRLF README's paragraphs) below both. Warm
    recall@10 is under 0.80 on the seventh (0.74, after tuning on it), the eighth (0.66, after tuning on it), the
    ninth (0.73, unseen), the tenth (0.47, unseen) and the eleventh (0.76, unseen, measured once after the CRLF
    and CJK fixes: 0.73 / 0.76 against 0.71 / 0.79, above plain BM25 cold and asserted so): not asserted there,
    the misses stated. Round 13 (a code block's steps read together) put find level with or above plain BM25 cold
    on the sixth and ninth sets and warm on the eighth; the twelfth and thirteenth sets, unseen, each measured once
    after it: 0.58 / 0.64 against 0.55 / 0.63 and 0.64 / 0.66 against 0.55 / 0.58, above both, warm under 0.80;
    the fourteenth, unseen, measured once after it: 0.68 / 0.70 against 0.69 / 0.67, one key passage below cold
    (not asserted, the miss stated) and above warm; the fifteenth, unseen, measured once after it: 0.73 / 0.83
    against 0.78 / 0.80, five key passages below cold (not asserted), above warm and warm at least 0.80 (asserted)."""
    import sys

    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import find_real
    from find_recall import load_rubric

    rubric = load_rubric()
    not_below = {("real-docs", False), ("real-docs", True), ("heldout2", False), ("heldout3", True),
                 ("heldout4", False), ("heldout4", True), ("heldout5", False), ("heldout5", True), ("heldout6", True),
                 ("heldout7", False), ("heldout8", False), ("heldout11", False),
                 # since round 13's code steps
                 ("heldout6", False), ("heldout8", True), ("heldout9", False),
                 # the twelfth and thirteenth sets, unseen, each measured once after round 13
                 ("heldout12", False), ("heldout12", True), ("heldout13", False), ("heldout13", True),
                 # the fourteenth and fifteenth, unseen, each measured once after round 13: above warm, below cold
                 ("heldout14", True), ("heldout15", True)}
    warm_under_target = {"heldout7", "heldout8", "heldout9", "heldout10", "heldout11", "heldout12", "heldout13",
                         "heldout14"}
    try:
        for documents_set in find_real.SETS:
            folder, key_path = find_real.SETS[documents_set]
            documents = find_real.load_documents(folder, key_path)
            order = list(find_real.load_key(key_path)["order"])
            methods = find_real.methods(rubric)
            for warm in (False, True):
                find, bm25 = (find_real.evaluate(documents, order, order, methods[label], rubric, warm=warm).recall[10]
                              for label in ("protocoder find", "bm25 paragraphs"))
                if (documents_set, warm) in not_below:
                    assert find >= bm25, (documents_set, "warm" if warm else "cold", find, bm25)
                if warm and documents_set not in warm_under_target:
                    assert find >= 0.80, (documents_set, "warm", find)
    finally:
        sys.modules.pop("find_real", None)


def test_the_code_block_that_matches_best_as_a_whole_has_a_line_in_the_top_ten() -> None:
    """webarena-verified's README starts its sites with a code block of ``docker run -d --name
    webarena-verified-<site> …`` lines, one container per site: read whole (plain BM25 over paragraphs), that
    block is the best match for separate evidence; cut into its commands, each ranked 11th or lower at the code
    factor. The block's best line now takes the last code slot of the top 10, and the prose above it stays."""
    name = "webarena-verified/README.md"
    data = (REPO / "tests" / "data" / "real-docs-heldout3" / name).read_bytes()
    index = PassageIndex.build(source_passages("readme", extract(data, "text/markdown"), data.decode("utf-8")))
    rubric = _rubric()
    query = field_query(rubric, rubric.field("separate_evidence"))
    found = index.search(query, 10)
    assert any(c.text.startswith("# Docker\ndocker run -d --name webarena-verified-shopping") for c in found)
    # the block's line takes a code slot, never a prose one; and a shorter or longer list is a prefix of the same
    kinds = {(p.start, p.end): p.kind for p in index.passages}
    assert [c.text for c in found if kinds[(c.start, c.end)] == "prose"] == [
        c.text for c in sorted(index.search(query, 40), key=lambda c: -c.score)
        if kinds[(c.start, c.end)] == "prose"][:len([c for c in found if kinds[(c.start, c.end)] == "prose"])]
    assert index.search(query, 20)[:10] == found
    assert index.search(query, 5) == found[:5]


def _find_real(monkeypatch):  # noqa: ANN001, ANN202
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import find_real

    return find_real


def test_the_measure_reads_code_blocks_as_commonmark_does(monkeypatch) -> None:  # noqa: ANN001
    """tale-suite's README opens a ```` ```python ```` fence in each numbered list item and never closes it:
    CommonMark (and GitHub) close it with the item. Counting fences from the top of the file, as rounds 1-5's
    measure did, flipped every later paragraph, so sentences ("To serve a custom HugginFace model with vLLM,
    …") counted as code in find's non-evidence. The measure now reads the code blocks as CommonMark does."""
    import sys

    find_real = _find_real(monkeypatch)
    try:
        raw = (REPO / "tests" / "data" / "real-docs-heldout3" / "tale-suite" / "README.md").read_text(encoding="utf-8")
        blocks = find_real.code_blocks(raw)

        def kind(needle: str) -> str:
            start = raw.index(needle)
            return find_real.non_evidence_kind(raw, start, start + len(needle), blocks)

        assert kind("Run benchmark evaluation on a subset of the games:") == ""
        assert kind("To serve a custom HugginFace model with vLLM") == ""
        assert kind("You can check that everything is working properly") == ""
        # a fence inside a list item, an indented block after a sentence, a fence closed as usual: code
        assert kind("python benchmark.py --agent agents/random.py random --env textworld") == "code"
        assert kind("docker run --runtime nvidia --gpus all") == "code"
        assert kind("from typing import Dict, Any") == "code"
    finally:
        sys.modules.pop("find_real", None)


def test_the_measure_reads_a_mkdocs_admonition_as_the_extraction_does(monkeypatch) -> None:  # noqa: ANN001
    """inspect-k8s-sandbox's limitations page (fourth set) writes its asides as MkDocs admonitions (``???
    question "Why not use Jobs over StatefulSets?"`` and a body indented by four spaces). Plain CommonMark reads
    the body as an indented code block, so until round 7 the measure counted its sentences and list items as
    code while ``find`` (whose extraction reads admonitions) ranked them as prose. A fence inside stays code."""
    import sys

    find_real = _find_real(monkeypatch)
    try:
        raw = (REPO / "tests" / "data" / "real-docs-heldout4" / "inspect-k8s-sandbox" / "docs" / "docs" / "design"
               / "limitations.md").read_text(encoding="utf-8")
        blocks = find_real.code_blocks(raw)

        def kind(needle: str) -> str:
            start = raw.index(needle)
            return find_real.non_evidence_kind(raw, start, start + len(needle), blocks)

        assert kind("The readiness wait does not wait for Pods belonging to Jobs") == ""
        assert kind("The Python code would need a way of periodically checking") == ""
        assert kind("is another service's name will result in a reverse DNS lookup") == ""
        assert kind("ping victim") == "code"
    finally:
        sys.modules.pop("find_real", None)


def _heldout4_index(name: str, folder: str = "real-docs-heldout4") -> PassageIndex:
    data = (REPO / "tests" / "data" / folder / name).read_bytes()
    return PassageIndex.build(source_passages("readme", extract(data, "text/markdown"), data.decode("utf-8")))


def test_a_setting_that_shares_one_word_with_the_field_comes_after_the_other_candidates() -> None:
    """multi-swe-bench's README shows its run configuration as JSON; ``"stop_on_error": true,`` and
    ``"max_workers": 8,`` share one word each with open work and, as one-line passages, outscored sentences of
    the README (ranks 6 and 8). A line of configuration names a setting: with fewer than ``SHARED_WORDS`` of
    the query's words it is listed after every other candidate, not dropped."""
    index = _heldout4_index("multi-swe-bench/README.md")
    rubric = _rubric()
    query = field_query(rubric, rubric.field("open_work"))
    top = [c.text for c in index.search(query, 10)]
    longer = [c.text for c in index.search(query, 20)]
    for setting in ('"stop_on_error": true,', '"max_workers": 8,'):
        assert setting not in top
        assert setting in longer[10:]
    assert longer[:10] == top
    # a setting that shares more of the field's words keeps its place
    assert '"max_workers_run_instance": 8,' in top


def test_a_floored_code_line_follows_the_first_ten_instead_of_vanishing() -> None:
    """miniwob's example code says ``# Start a new episode.`` above ``obs, info = env.reset()``: a key passage of
    the third set for separate evidence, scored under ``CODE_FLOOR`` of the best sentence. Until round 8 the floor
    dropped it from every list, however long; now it stays off the first ``FLOOR_PLACES`` places and follows the
    other candidates, so ``find --limit 20`` shows it."""
    from protocoder.evidence.search import ranking

    index = _heldout4_index("miniwob/README.md", "real-docs-heldout3")
    rubric = _rubric()
    query = field_query(rubric, rubric.field("separate_evidence"))
    top = index.search(query, ranking.FLOOR_PLACES)
    longer = index.search(query, 20)
    assert [c.text for c in longer[:ranking.FLOOR_PLACES]] == [c.text for c in top]
    kinds = {(p.start, p.end): p.kind for p in index.passages}
    best = top[0].score
    assert not [c.text for c in top if kinds[(c.start, c.end)] in ranking.FLOORED_KINDS
                and c.score < CODE_FLOOR * best]
    tail = [c.text for c in longer[ranking.FLOOR_PLACES:]]
    assert any("# Start a new episode.\n  obs, info = env.reset()" in t for t in tail), tail  # in its step
    # the floored ones come after every other candidate
    floored = [kinds[(c.start, c.end)] in ranking.FLOORED_KINDS and c.score < CODE_FLOOR * best for c in longer]
    assert floored == sorted(floored)


def test_a_setting_sharing_one_word_stays_off_a_short_readmes_top_ten() -> None:
    """pydantic-evals' README (sixth set) is short: for separate evidence its sentences do not fill ten places, so
    the lines deferred by round 7 (``environment='development',``, ``service_name='evals',``: a setting's name is
    the one shared word) took the last places of the top 10. Since round 9 they stay off the first
    ``FLOOR_PLACES`` places, as floored code does, and the list ends with the sentences."""
    from protocoder.evidence.search import ranking

    index = _heldout4_index("pydantic-evals/README.md", "real-docs-heldout6")
    rubric = _rubric()
    query = field_query(rubric, rubric.field("separate_evidence"))
    top = [c.text for c in index.search(query, ranking.FLOOR_PLACES)]
    assert top
    for setting in ("environment='development',", "service_name='evals',"):
        assert setting not in top, top
    assert index.search(query, 20)[:len(top)] == index.search(query, ranking.FLOOR_PLACES)


def test_a_table_whose_rows_describe_ranks_as_prose_and_a_table_of_values_does_not() -> None:
    """cua-bench's README (seventh set) lists its run flags in a table, each row saying what the flag does
    (``--attempts N`` / ``Run every variant N times (fresh sandbox each)``): the rows a reviewer cites for reset
    or retention. At the table factor (0.5) under the floor it came 11th; as a ``reference`` table (round 10) it
    is in the top 10. Crafter's tables of scores and key bindings stay tables."""

    index = _heldout4_index("cua-bench/README.md", "real-docs-heldout7")
    [flags] = [p for p in index.passages if p.kind in ("table", "reference")]
    assert flags.kind == "reference"
    rubric = _rubric()
    top = [c.text for c in index.search(field_query(rubric, rubric.field("reset_retention")), 10)]
    assert any("--attempts N" in t and "fresh sandbox each" in t for t in top), top
    values = [p for p in _heldout4_index("crafter/README.md", "real-docs-heldout5").passages
              if p.kind in ("table", "reference")]
    assert len(values) == 4
    assert {p.kind for p in values} == {"table"}


def test_a_bibtex_entry_does_not_fill_a_short_readmes_top_ten() -> None:
    """swesmith's README has few passages that share words with reset or retention; its citation block (a
    ``boilerplate`` passage, factor 0.1) filled the seventh slot at a hundredth of the best score. Boilerplate,
    badges and tables of contents are under the code floor now, as install lines are."""
    index = _heldout4_index("swesmith/README.md")
    rubric = _rubric()
    for field_id in ("reset_retention", "separate_evidence", "open_work"):
        found = index.search(field_query(rubric, rubric.field(field_id)), 10)
        assert not any("@inproceedings" in c.text for c in found), field_id


def test_non_evidence_is_at_most_a_tenth_of_the_top_ten_on_every_set(monkeypatch) -> None:  # noqa: ANN001
    """Issue 29: code that is not evidence, install lines, badges and tables of contents hold at most 10 % of
    find's top 10, cold and warm, on the four sets of real documents of benchmarks/find_real.py (the third,
    heldout3, measured once unseen in round 5: 12 % cold there with code counted by fence parity, 9 % with the
    code blocks CommonMark reads; the fourth, measured once unseen in round 6: 15 % / 13 %, 7 % / 7 % after
    round 7; the sixth, unseen until round 8: 11 % / 10 %, 9 % / 10 % after round 10). Not on the seventh (unseen
    until round 9: 15 % / 13 %; 13 % / 12 % after round 10): its API pages and a README made of examples are
    mostly code, and the rules that took code off their top 10 lost key passages on the third and sixth sets
    (benchmarks/find_real_results.md, rounds 9 and 10). Nor on the eighth, unseen, measured once after round 10
    (13.0 % / 8 %). Nor on the tenth, unseen, measured once after round 11 (20 % / 22 %; 24.6 % / 29.3 % once
    its CRLF README was cut into its paragraphs: a design page drawn in boxes and code, and a Chinese README whose
    sentences share no word with the English query, leave code lines to fill the top 10). On those three the
    target is missed, and the test holds them to what was measured, rounded up to half a point, so that they
    cannot get worse unseen. So is the eleventh, unseen, measured once after the CRLF and CJK fixes (14.3 % /
    14.6 %: code lines of short READMEs that say little about runs). Round 13's code steps brought the seventh
    (9.6 % / 8.2 %) and the eighth (8.7 % / 5.6 %) under 10 %, and the tenth to 19.0 % / 20.2 %. The twelfth, unseen,
    measured once after round 13: 24.1 % / 21.1 %. The thirteenth, unseen, measured once after round 13, is under
    10 % (7 % / 8 %) and asserted so; so are the fourteenth (8 % / 7 %) and the fifteenth (5 % / 6 %)."""
    import sys

    find_real = _find_real(monkeypatch)
    from find_recall import load_rubric

    rubric = load_rubric()
    over_target = {"heldout10": 0.205, "heldout11": 0.15, "heldout12": 0.245}
    try:
        for documents_set in find_real.SETS:
            folder, key_path = find_real.SETS[documents_set]
            documents = find_real.load_documents(folder, key_path)
            order = list(find_real.load_key(key_path)["order"])
            find = find_real.methods(rubric)["protocoder find"]
            for warm in (False, True):
                share = find_real.evaluate(documents, order, order, find, rubric, warm=warm).non_evidence
                limit = over_target.get(documents_set, 0.10)
                assert share <= limit, (documents_set, "warm" if warm else "cold", share)
    finally:
        sys.modules.pop("find_real", None)


def test_the_paired_comparison_is_an_exact_two_sided_binomial_test(monkeypatch) -> None:  # noqa: ANN001
    """``find_real.mcnemar`` (how far apart find and plain BM25 are, key passage by key passage) counts the
    discordant key passages at 10 and gives the exact two-sided binomial p-value of their split, as defined by
    summing the probability of every split no likelier than the one seen (scipy's ``binomtest`` definition)."""
    import random
    import sys
    from fractions import Fraction
    from math import comb

    def binomtest(successes: int, n: int) -> float:
        probability = [Fraction(comb(n, i), 2 ** n) for i in range(n + 1)]
        return float(sum(q for q in probability if q <= probability[successes]))

    find_real = _find_real(monkeypatch)
    try:
        rng = random.Random(29)
        for _ in range(200):
            size = rng.randrange(0, 60)
            first = [rng.choice([None, *range(20)]) for _ in range(size)]
            second = [rng.choice([None, *range(20)]) for _ in range(size)]
            only_first, only_second, p = find_real.mcnemar(first, second)
            assert only_first == sum(1 for a, b in zip(first, second, strict=True)
                                     if a is not None and a < 10 and (b is None or b >= 10))
            assert only_second == sum(1 for a, b in zip(first, second, strict=True)
                                      if b is not None and b < 10 and (a is None or a >= 10))
            n = only_first + only_second
            expected = binomtest(only_first, n) if n else 1.0
            assert abs(p - expected) < 1e-9, (only_first, only_second, p, expected)
    finally:
        sys.modules.pop("find_real", None)
