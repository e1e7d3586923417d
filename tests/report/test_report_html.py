"""The HTML report rendered from fixture results files: content, escaping, sections, errors, the CLI."""

from __future__ import annotations

import copy
import html as html_lib
import json
import re

import pytest
from markupsafe import Markup

from pytest_nlgeval.cli import main as cli_main
from pytest_nlgeval.report import ReportInputError, load_results, render_html, write_html
from pytest_nlgeval.report.sections import collect_sections
from pytest_nlgeval.report.view import build_view
from paths import DATA

PAYLOAD = "<script>alert(1)</script>"


@pytest.fixture()
def results():
    return load_results(DATA / "report_results.json")


def _text(page: str) -> str:
    """The page's visible text, roughly: tags dropped, entities decoded."""
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", page))


def test_summary_numbers_come_from_the_results_file(results):
    page = render_html(results)
    summary, counts = results["summary"], results["baseline"]["counts"]
    for name in ("checks", "passed", "failed"):
        assert re.search(rf'id="summary-{name}">{summary[name]}<', page)
    expected_regressions = counts["regressions"] + counts["suite_regressions"]
    assert expected_regressions == 3
    assert re.search(rf'id="summary-regressions">{expected_regressions}<', page)
    assert 'class="verdict failed"' in page


def test_injected_markup_is_escaped_and_no_script_is_on_the_page(results):
    assert any(PAYLOAD in json.dumps(c["details"]) for c in results["checks"])
    page = render_html(results)
    assert PAYLOAD not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page.lower()
    # Defence in depth: the policy forbids scripts and any network request even if escaping ever failed.
    assert "default-src 'none'" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "the page must not load anything"


def test_failures_and_regressions_come_first(results):
    view = build_view(results)
    statuses = [row.status for row in view.rows]
    assert statuses == sorted(statuses, key=["failed", "regressed", "passed"].index)
    assert statuses[0] == "failed" and "regressed" in statuses
    page = render_html(results)
    order = re.findall(r'<tr class="(failed|regressed|passed)" data-key', page)
    assert order == statuses


def test_long_texts_are_collapsed_and_sentences_listed(results):
    page = render_html(results)
    long_source = next(c for c in results["checks"] if len(c["details"]["inputs"].get("source", "")) > 600)
    source = long_source["details"]["inputs"]["source"]
    assert f"({len(source)} characters, click to expand)" in page
    assert html_lib.escape(source, quote=False) in page  # the full text is there, behind <details>
    units = long_source["details"]["units"]
    for unit in units:
        assert html_lib.escape(unit["text"], quote=False) in page
    assert 'class="weakest"' in page
    assert "was truncated (tail first)" in page


def test_baseline_section_shows_intervals_and_old_to_new(results):
    page = render_html(results)
    suite = next(s for s in results["baseline"]["suites"] if s["status"] == "regression")
    assert f"[{suite['low']:+.4f}, {suite['high']:+.4f}]" in page
    regression = next(c for c in results["baseline"]["checks"] if c["status"] == "regression")
    row = re.search(re.escape(regression["key"]) + r".*?</tr>", page, re.S).group(0)
    assert f"{regression['old']:.4f}" in row and f"{regression['new']:.4f}" in row
    with_interval = [s for s in results["baseline"]["suites"] if s["low"] is not None]
    assert 0 < len(with_interval) < len(results["baseline"]["suites"])
    assert page.count("<circle") == len(with_interval)  # one point per dimension with an interval
    for suite in results["baseline"]["suites"]:
        assert f"<td>{suite['label']}</td>" in page  # every dimension is in the table


def test_distribution_charts_show_each_dimension_and_threshold(results):
    page = render_html(results)
    view = build_view(results)
    labels = {g.label for g in view.groups}
    assert {"summarization/consistency", "dialogue/groundedness", "metric:helpful"} <= labels
    assert "trajectory:diversity_end" not in labels  # trajectories get plots of their own
    consistency = next(g for g in view.groups if g.label == "summarization/consistency")
    assert consistency.thresholds == [(">", 0.7)] and consistency.n == 6
    assert page.count('class="threshold"') == sum(len(g.thresholds) for g in view.groups)
    failed_bars = re.findall(r"(\d+) failed</title>", page)
    assert sum(map(int, failed_bars)) == sum(g.failed for g in view.groups)


def test_trajectory_and_metric_sections_are_built_in(results):
    page = render_html(results)
    assert 'id="nlgeval-trajectories"' in page and 'id="nlgeval-metrics"' in page
    assert 'class="band"' in page  # the reference band behind the diversity trajectory
    assert "heldout_kendall_tau" in page


def test_hook_sections_are_inserted_and_plain_strings_escaped(results):
    sections = [
        {"id": "custom-plot", "title": "My plot", "html": Markup("<svg><rect/></svg>")},
        {"id": "plain", "title": "Plain", "html": "<b>not bold</b>"},
        {
            "id": "better-trajectories",
            "title": "Trajectories (plugin)",
            "html": Markup("<p>mine</p>"),
            "replaces": "nlgeval-trajectories",
        },
    ]
    page = render_html(results, sections=sections)
    assert "<svg><rect/></svg>" in page
    assert "&lt;b&gt;not bold&lt;/b&gt;" in page
    assert 'id="nlgeval-trajectories"' not in page and 'id="better-trajectories"' in page


@pytest.mark.parametrize(
    "section, message",
    [
        ({"id": "1bad", "title": "t", "html": ""}, "section id"),
        ({"id": "ok", "title": "", "html": ""}, "title"),
        ({"id": "checks", "title": "t", "html": ""}, "already used"),
    ],
)
def test_invalid_sections_are_refused(results, section, message):
    with pytest.raises(ValueError, match=message):
        render_html(results, sections=[section])


def test_sections_from_a_plugin_module_outside_pytest(results, tmp_path, monkeypatch):
    (tmp_path / "my_sections.py").write_text(
        "from markupsafe import Markup\n"
        "def pytest_nlgeval_report_sections(results):\n"
        "    return [{'id': 'count', 'title': 'Count', 'html': Markup('<p>%d checks</p>' % len(results['checks']))}]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sections = collect_sections(results, plugins=["my_sections"], autoload=False)
    assert [(s.id, str(s.html)) for s in sections] == [("count", f"<p>{len(results['checks'])} checks</p>")]
    with pytest.raises(ImportError, match="no_such_module"):
        collect_sections(results, plugins=["no_such_module"], autoload=False)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: r.update(schema="something/else"), "'schema' is 'something/else'"),
        (lambda r: r.update(version=99), "version 99 is not supported"),
        (lambda r: r["checks"][0].pop("passed"), "no boolean 'passed'"),
        (lambda r: r["checks"][0].update(score="high"), "'score' must be a number"),
    ],
)
def test_malformed_results_are_refused_with_the_field(results, tmp_path, mutate, message):
    bad = copy.deepcopy(results)
    mutate(bad)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ReportInputError, match=re.escape(message)):
        load_results(path)


def test_not_json_names_the_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"schema": "pytest-nlgeval/results",\n  "version": 1,\n  oops}')
    with pytest.raises(ReportInputError, match="line 3"):
        load_results(path)


def test_empty_run_and_missing_optional_fields_render(results):
    minimal = {"schema": "pytest-nlgeval/results", "version": 1, "checks": []}
    page = render_html(minimal)
    assert 'class="verdict empty"' in page and "This run recorded no checks." in page
    check = {
        "key": "t::fluency::0",
        "nodeid": "t",
        "kind": "dimension",
        "name": "fluency",
        "passed": False,
        "score": None,
        "threshold": None,
    }
    page = render_html({**minimal, "checks": [check]})
    assert 'id="summary-failed">1<' in page and "n/a" in page


def test_comparison_error_is_shown(results):
    broken = dict(
        results,
        baseline={
            "status": "refused",
            "path": "b.json",
            "error": "refusing to compare scores made by different evaluators",
        },
    )
    page = render_html(broken)
    assert 'id="baseline-error"' in page and "refusing to compare" in page


def test_write_is_atomic_and_cli_renders(results, tmp_path, capsys):
    target = tmp_path / "out" / "report.html"
    write_html(results, target)
    assert target.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]  # no temporary file left behind
    out = tmp_path / "cli.html"
    assert cli_main(["report", str(DATA / "report_results.json"), "-o", str(out), "--no-plugins"]) == 0
    assert 'id="summary-checks">29<' in out.read_text()
    assert cli_main(["report", str(tmp_path / "missing.json"), "-o", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_compares_with_a_baseline_file(results, tmp_path):
    head = copy.deepcopy(results)
    del head["baseline"]
    base = copy.deepcopy(head)
    dropped = next(c for c in head["checks"] if c["kind"] == "dimension" and c["passed"])
    for check in base["checks"]:
        if check["key"] == dropped["key"]:
            check["score"] = dropped["score"] + 0.3  # the old run scored this case much higher
    (tmp_path / "head.json").write_text(json.dumps(head))
    (tmp_path / "base.json").write_text(json.dumps(base))
    out = tmp_path / "r.html"
    assert (
        cli_main(
            [
                "report",
                str(tmp_path / "head.json"),
                "--baseline",
                str(tmp_path / "base.json"),
                "-o",
                str(out),
                "--no-plugins",
            ]
        )
        == 0
    )
    page = out.read_text()
    row = re.search(re.escape(dropped["key"]) + r".*?</tr>", page.split('id="baseline-regressions"')[1], re.S)
    assert row and f"{dropped['score'] + 0.3:.4f}" in row.group(0)
    assert 'id="summary-regressions">1<' in page


def test_importing_the_report_plugin_loads_no_template_engine():
    import subprocess
    import sys

    code = (
        "import sys, pytest_nlgeval.report.plugin, pytest_nlgeval.report;"
        "print([m for m in ('jinja2', 'markupsafe', 'numpy', 'onnxruntime') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_failed_checks_of_xfail_tests_are_expected_not_failures():
    from pytest_nlgeval.report.view import build_view

    check = {
        "key": "t.py::test_a::fluency::0",
        "nodeid": "t.py::test_a",
        "kind": "dimension",
        "name": "fluency",
        "task": "summarization",
        "index": 0,
        "score": 0.4,
        "operator": ">",
        "threshold": 0.9,
        "passed": False,
        "evaluator": None,
        "details": {},
        "xfail": True,
    }
    ok = dict(check, key="t.py::test_b::fluency::0", nodeid="t.py::test_b", passed=True, xfail=False, score=0.95)
    view = build_view({"schema": "pytest-nlgeval/results", "version": 1, "checks": [check, ok], "evaluators": {}})
    assert (view.failed, view.passed, view.xfailed, view.failed_tests) == (0, 1, 1, 0)
    assert view.verdict == "passed" and "1 expected to fail (xfail)" in view.headline
    assert view.failures == []


def test_judged_checks_show_criterion_and_rationale_and_samples_their_spread(results):
    results = copy.deepcopy(results)
    check = copy.deepcopy(results["checks"][0])
    check.update(
        key="tests/test_bot.py::test_polite::the_reply_is_polite::0",
        nodeid="tests/test_bot.py::test_polite",
        kind="judged",
        name="the_reply_is_polite",
        task=None,
        score=4.2,
        operator=">=",
        threshold=4.0,
        passed=True,
        evaluator=None,
    )
    check["details"] = {
        "criterion": "The reply is polite <b>and</b> names the opening time.",
        "rationale": "It thanks the customer and says 9 am.",
        "method": "logprobs",
        "scale": [1, 5],
        "model": "openai/judge",
        "spread": 0.0,
        "steps": ["Read it."],
        "samples": [{"score": 4, "value": 4.2, "method": "logprobs"}],
        "inputs": {"output": "Thanks! We open at 9 am."},
    }
    rate = copy.deepcopy(check)
    rate.update(
        key="tests/test_bot.py::test_polite::fraction>3(x)::0",
        kind="aggregate",
        name="fraction>3(x)",
        score=0.8,
        threshold=0.6,
    )
    rate["details"] = {
        "aggregate": "fraction>3",
        "n": 5,
        "cases": [],
        "samples": {"n": 5, "of": "bot.reply", "distinct": 3, "min": 2.0, "mean": 3.8, "max": 5.0, "sd": 1.1},
    }
    results["checks"] += [check, rate]
    page = render_html(results)
    text = " ".join(_text(page).split())
    assert "Judged checks" in text and "Criterion: The reply is polite <b>and</b> names the opening time." in text
    assert "Rationale: It thanks the customer and says 9 am." in text and "<b>and</b>" not in page
    assert "Repeated samples" in text and "bot.reply" in text and "1.100" in text


def test_a_judged_check_is_drawn_on_its_scale_with_a_label_that_fits(results):
    """The judge's 1-5 scale is a range, not a line; its distribution over the scale is drawn as bars; the
    group's histogram spans the scale; a threshold near the right edge has its label left of its line."""
    results = copy.deepcopy(results)
    check = copy.deepcopy(results["checks"][0])
    check.update(
        key="tests/test_bot.py::test_polite::polite::0",
        nodeid="tests/test_bot.py::test_polite",
        kind="judged",
        name="polite",
        task=None,
        score=4.9,
        operator=">=",
        threshold=4.8,
        passed=True,
        evaluator=None,
    )
    check["details"] = {
        "criterion": "The reply is polite.",
        "method": "completion",
        "scale": [1, 5],
        "model": "openai/judge",
        "spread": 0.0,
        "samples": [{"score": 5, "value": 4.9, "method": "completion", "distribution": {"4": 0.1, "5": 0.9}}],
    }
    results["checks"] = [check]
    results.pop("baseline", None)
    page = render_html(results)
    assert "polyline" not in page  # no line chart of [1, 5]
    bars = re.findall(r'class="bar-scale"><title>(\d): ([0-9.]+)</title>', page)
    assert bars == [("4", "0.100"), ("5", "0.900")]
    # the histogram of the group spans 1 to 5: its tick labels include 1 and 5
    histogram = page[page.rindex("<svg", 0, page.index('aria-label="judged:polite score distribution"')) :]
    histogram = histogram[: histogram.index("</svg>")]
    ticks = re.findall(r'class="tick" text-anchor="middle">([0-9.]+)<', histogram)
    assert ticks[0] == "1" and ticks[-1] == "5"
    label = re.search(
        r'<text x="([0-9.]+)"( text-anchor="end")? y="[0-9.]+" class="threshold-label">&gt;= 4.8<', histogram
    )
    assert label is not None
    width = float(re.search(r'width="(\d+)"', histogram).group(1))
    x = float(label.group(1))
    assert label.group(2)  # flipped: left of its line
    assert x <= width


def _check(**fields) -> dict:
    check = {
        "key": "t.py::test_a::fluency::0",
        "nodeid": "t.py::test_a",
        "kind": "dimension",
        "name": "fluency",
        "task": "summarization",
        "index": 0,
        "score": 0.4,
        "operator": ">",
        "threshold": 0.9,
        "passed": False,
        "evaluator": None,
        "details": {},
        "xfail": False,
    }
    check.update(fields)
    return check


def _results(*checks) -> dict:
    return {"schema": "pytest-nlgeval/results", "version": 1, "checks": list(checks), "evaluators": {}}


def test_a_failed_check_of_an_xfail_test_is_shown_as_xfailed_in_a_neutral_colour():
    expected = _check(xfail=True)
    ok = _check(key="t.py::test_b::fluency::0", nodeid="t.py::test_b", passed=True, score=0.95)
    page = render_html(_results(expected, ok))
    assert re.search(r'id="summary-failed">0<', page)
    row = page[page.index('data-key="t.py::test_a::fluency::0"') :]
    row = row[: row.index("</tr>")]
    assert re.search(r'<span class="badge xfailed"[^>]*>xfailed</span>', row)
    assert "badge failed" not in page and 'class="failed"' not in page
    css = page[page.index("<style>") : page.index("</style>")]
    assert re.search(r"\.badge\.xfailed \{ background: #e6e9ec;", css)  # grey, not the failure red
    text = " ".join(_text(page).split())
    assert "2 scores, mean 0.675, 0 failed, 1 expected to fail (xfail)" in text
    chart = page[page.index('aria-label="summarization/fluency score distribution"') :]
    chart = chart[: chart.index("</svg>")]
    assert 'class="bar-xfail"' in chart and 'class="bar-fail"' not in chart
    # its test still fails as expected, so the failure list and the summaries leave it out
    assert build_view(_results(expected, ok)).failures == []


def test_thresholds_are_printed_with_at_most_four_decimals():
    from pytest_nlgeval.report import step_summary

    raw = 0.9955536800276724
    checks = [
        _check(operator="<", threshold=raw, score=0.9990, details={"inputs": {"output": "x"}}),
        _check(
            key="t.py::test_j::polite::0",
            nodeid="t.py::test_j",
            kind="judged",
            name="polite",
            task=None,
            score=4.2,
            operator=">=",
            threshold=4.123456789,
            passed=True,
            details={"criterion": "c", "scale": [1, 5], "method": "completion", "model": "m"},
        ),
        _check(
            key="t.py::test_t::diversity::0",
            nodeid="t.py::test_t",
            kind="trajectory",
            name="diversity",
            task=None,
            score=0.5,
            operator=">",
            threshold=1 / 3,
            passed=True,
            details={},
        ),
    ]
    page = render_html(_results(*checks))
    assert "0.99555" not in page and "4.12345" not in page and "0.33333" not in page
    text = " ".join(_text(page).split())
    assert "< 0.9956" in text  # the checks table and the distribution's caption
    assert "threshold < 0.9956" in text and "&lt; 0.9956</text>" in page  # the chart's label
    assert ">= 4.1235" in text and "> 0.3333" in text  # the judged and trajectory cards
    assert "| &lt; 0.9956 |" in step_summary(_results(*checks))  # Markdown escapes "<"


def test_threshold_labels_near_the_right_edge_cover_neither_each_other_nor_the_bars():
    from pytest_nlgeval.report.charts import distribution_chart

    scores = [0.97, 0.98, 0.99, 0.991, 0.993, 0.995, 0.996, 0.996, 0.999, 0.999, 1.0, 1.0]
    thresholds = [("<", 0.9955536800276724), (">", 0.99), (">=", 0.98), (">", 0.5)]
    svg = str(distribution_chart(scores, [True] * len(scores), thresholds, title="near one"))
    width = float(re.search(r'width="(\d+)"', svg).group(1))
    labels = re.findall(r'<text x="([0-9.]+)"( text-anchor="end")? y="([0-9.]+)" class="threshold-label">([^<]+)<', svg)
    assert len(labels) == 4
    boxes = []
    for x, end, y, label in labels:
        w = 6.5 * len(html_lib.unescape(label))  # the 11 px font, as the chart estimates it
        left = float(x) - w if end else float(x)
        boxes.append((left, left + w, float(y) - 10, float(y) + 2))
    for left, right, top, bottom in boxes:
        assert 0 <= left and right <= width
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            apart = a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2]
            assert apart, f"labels overlap: {labels}"
    tallest = min(float(y) for y in re.findall(r'<rect x="[0-9.]+" y="([0-9.]+)"', svg))
    assert max(box[3] for box in boxes) <= tallest  # every label above the highest bar
    ticks = re.findall(r'<text x="([0-9.]+)" y="[0-9.]+" class="tick" text-anchor="(\w+)">([^<]+)<', svg)
    for x, anchor, text in ticks:  # no tick label is cut at an edge
        w = 6.5 * len(text)
        left = {"start": float(x), "middle": float(x) - w / 2, "end": float(x) - w}[anchor]
        assert 0 <= left and left + w <= width
