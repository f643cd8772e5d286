"""The reports as a person sees them: rendered by a real browser (Debian's chromium driven by
Selenium through Debian's chromium-driver) at 1024, 1280 and 1440 px, and measured there with
getBoundingClientRect.

Pages: the example's single-estimate reports served by `trncost serve` (trn2: COMPLETE, trn3:
waiting on a PENDING price), the comparison report the API renders for the example's
candidates, and the analysis page `trncost compare --html` writes. On each, at each width:
nothing is wider than the viewport and nothing scrolls sideways; every chart label is legible
(inside its chart, not on another label, tall enough to read); every cell of the line items
and the input tables (value, unit, provenance, source, and the line items' quantity, rate and
amount) lies inside the viewport, is not clipped, and no row is absurdly tall. Screenshots of
every page at every width are kept in test-artifacts/ (or $TRNCOST_TEST_ARTIFACTS); the path
is printed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.browser import (
    CHROMEDRIVER,
    CHROMIUM,
    SKIP_REASON,
    Browser,
    Layout,
    artifacts_dir,
)
from tests.support.examples import EXAMPLE, EXAMPLE_DIR, ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None, reason=SKIP_REASON),
]

WIDTHS = (1024, 1280, 1440)
# The columns a reader needs on screen, per table.
MUST_SEE = {
    "line-items": ("item", "quantity", "unit", "rate", "amount", "basis", "provenance", "source"),
    "inputs": ("input", "value", "unit", "provenance", "source"),
}
# ... and a price row of the input table its basis too.
# A row a line or four tall is fine; the issue found rows 100–300 px tall at 1400 px.
MAX_ROW_PX = 200
MAX_MEDIAN_ROW_PX = 90


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


@pytest.fixture(scope="module")
def say(request):
    """A line on the terminal even when pytest captures output."""
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")

    def line(text: str) -> None:
        if reporter is None or capture is None:
            print(text)
            return
        with capture.global_and_fixture_disabled():
            reporter.write_line(text)

    return line


@pytest.fixture(scope="module")
def shots(say) -> Path:
    path = artifacts_dir() / "report-layout"
    path.mkdir(parents=True, exist_ok=True)
    say(f"\nreport layout screenshots: {path}")
    return path


def _report_url(server, instance_type: str) -> str:
    log = server.output.read_text()
    found = re.search(
        rf"example report \({re.escape(instance_type)}\): ({re.escape(server.url)}/estimates/"
        r"[^ \n]+/report)",
        log,
    )
    assert found, log
    return found.group(1)


def _comparison_body() -> dict:
    request = json.loads(EXAMPLE.read_text())
    return {"candidates": request["candidates"], "assumptions": request["assumptions"],
            "samples": 2000, "seed": 7}  # fmt: skip


def check_layout(layout: Layout, page: str, width: int) -> None:
    """What a reader at `width` px gets: everything on screen, nothing clipped or absurd."""
    where = f"{page} at {width} px ({layout.screenshot})"
    assert layout.viewport == width, where
    assert layout.page_width <= width, f"{where}: the page scrolls sideways"
    assert layout.widest["width"] <= width + 0.5, f"{where}: {layout.widest} is wider"
    tables = {k: v for k, v in layout.tables.items() if v["rows"]}
    assert tables, f"{where}: no line items or input table"
    for name, table in tables.items():
        kind = name.split(":")[0]
        assert table["scroll"] <= 0, f"{where}: {name} scrolls sideways by {table['scroll']} px"
        heights = sorted(r["height"] for r in table["rows"])
        tallest = max(table["rows"], key=lambda r: r["height"])
        assert heights[-1] <= MAX_ROW_PX, f"{where}: {name} row {tallest['id']} is {heights[-1]} px"
        median = heights[len(heights) // 2]
        assert median <= MAX_MEDIAN_ROW_PX, f"{where}: {name} rows are {median} px (median)"
        for row in table["rows"]:
            price_row = kind == "inputs" and "price:" in row["id"] and not row["pending"]
            # the columns a reader must see whole, per table kind (other tables, e.g. the
            # actuals' lines: nothing clipped, no sideways scroll, rows of a sane height)
            for col in MUST_SEE.get(kind, ()) + (("basis",) if price_row else ()):
                cell = row["cells"].get(col)
                assert cell is not None, f"{where}: {name} row {row['id']} has no {col}"
                narrowest = 10 if col == "basis" else 30  # a badge, or a dash for no price
                assert cell["visible"] and cell["width"] >= narrowest, f"{where}: {name}.{col}"
                assert cell["left"] >= 0 and cell["right"] <= width, (
                    f"{where}: {name} row {row['id']} {col} lies outside the viewport: {cell}"
                )
                assert cell["overflow"] <= 1, f"{where}: {name}.{col} is clipped: {cell}"


MIN_LABEL_PX = 9  # a chart label shorter than this is not legible


def _overlap(a: dict, b: dict) -> float:
    w = min(a["right"], b["right"]) - max(a["left"], b["left"])
    h = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    return w * h if w > 0 and h > 0 else 0.0


def check_chart_labels(layout: Layout, page: str, width: int) -> None:
    """Every chart label is legible: inside its chart (not clipped), tall enough to read, and
    lying on no other label (axis ticks, row names, values)."""
    where = f"{page} at {width} px ({layout.screenshot})"
    for name, chart in layout.charts.items():
        box, labels = chart["box"], chart["labels"]
        for lab in labels:
            assert lab["height"] >= MIN_LABEL_PX, f"{where}: {name} label {lab} is too small"
            inside = (
                lab["left"] >= box["left"] - 1 and lab["right"] <= box["right"] + 1
                and lab["top"] >= box["top"] - 1 and lab["bottom"] <= box["bottom"] + 1
            )  # fmt: skip
            assert inside, f"{where}: {name} label {lab['text']!r} is cut at the chart's edge"
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                assert _overlap(a, b) <= 2.0, (
                    f"{where}: {name} labels {a['text']!r} and {b['text']!r} overlap"
                )


def _measure_all(browser, shots: Path, url: str, page: str) -> dict[int, Layout]:
    out = {}
    for width in WIDTHS:
        layout = browser.measure(url, width, shots / f"{page}-{width}.png")
        check_layout(layout, page, width)
        check_chart_labels(layout, page, width)
        out[width] = layout
    return out


def test_the_complete_and_the_pending_estimate_reports_fit_1024_to_1440(
    server, browser, shots, say
):
    for instance_type, page in (("trn2.48xlarge", "estimate-trn2-complete"),
                                ("trn3.48xlarge", "estimate-trn3-pending")):  # fmt: skip
        layouts = _measure_all(browser, shots, _report_url(server, instance_type), page)
        at = layouts[1280]
        assert {"line-items", "inputs"} <= set(at.tables), at.tables.keys()
        pending_lines = [r for r in at.tables["line-items"]["rows"] if r["pending"]]
        if instance_type.startswith("trn3"):
            # the PENDING lines' source ("basis") column is whole, not clipped
            assert pending_lines, "the trn3 report has no PENDING line"
            for row in pending_lines:
                assert row["cells"]["source"]["overflow"] <= 1
                assert row["cells"]["source"]["right"] <= 1280
        say(f"{page}: page height {at.page_height} px, widest {at.widest['width']:.0f} px "
              f"({at.widest['what']}) at 1280 px")  # fmt: skip
        for width, layout in layouts.items():
            assert layout.screenshot and layout.screenshot.stat().st_size > 20_000, width


def test_the_comparison_report_fits_1024_to_1440(server, browser, shots, tmp_path):
    status, page = server.call(
        "POST", "/workloads/llama31-8b-cpt/comparisons/report", _comparison_body()
    )
    assert status == 200, page
    path = tmp_path / "comparison.html"
    path.write_text(page, encoding="utf-8")
    layouts = _measure_all(browser, shots, path.as_uri(), "comparison-report")
    at = layouts[1280]
    assert {k.split(":")[0] for k in at.tables} == {"inputs"}  # one folded table per candidate
    assert 'id="side-by-side"' in page


def test_the_analysis_page_fits_1024_to_1440(browser, shots, tmp_path):
    path = tmp_path / "analysis.html"
    done = subprocess.run(
        [sys.executable, "-m", "trncost_client.cli", "compare", str(EXAMPLE), "--samples", "2000",
         "--html", str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    layouts = _measure_all(browser, shots, path.as_uri(), "analysis")
    assert len(layouts[1280].tables) == len(json.loads(EXAMPLE.read_text())["candidates"])
    assert EXAMPLE_DIR.exists()


def test_the_70b_analysis_and_a_scaling_fit_keep_every_chart_label_legible(
    browser, shots, tmp_path
):
    """Large totals (the 70B example's millions) and a candidate with a scaling fit and a
    credits runway: every chart's labels stay whole and apart at 1024–1440 px."""
    from tests.support.examples import ROOT as repo
    from tests.unit.test_analysis_report import NAME, _scaled_trn2
    from trncost.estimate import analyse
    from trncost.model.analysis import Credits
    from trncost.report.analysis import render_analysis_report
    from trncost_client.requestfile import load_request_file, request_inputs

    seventy = request_inputs(load_request_file(repo / "examples" / "llama-70b" / "estimate.json"))
    eight = request_inputs(load_request_file(EXAMPLE))
    credits = Credits(amount_usd="100000", expires_on="2027-06-30", targets_per_month=2)
    pages = {
        "analysis-70b": analyse(seventy, seed=1, samples=2000),
        "analysis-scaling": analyse(
            [*eight, _scaled_trn2(eight[0])], seed=1, samples=2000, credits=credits,
            as_of="2026-11-02",
        ),
    }  # fmt: skip
    for page, analysis in pages.items():
        path = tmp_path / f"{page}.html"
        path.write_text(render_analysis_report(analysis, workload_name=NAME), encoding="utf-8")
        layouts = _measure_all(browser, shots, path.as_uri(), page)
        charts = layouts[1280].charts
        assert any(k.startswith("side-by-side") for k in charts), charts.keys()
        if page == "analysis-scaling":
            assert any("scaling" in k for k in charts), charts.keys()
