"""A real browser for the report layout tests: Debian's chromium driven by Selenium through
Debian's chromium-driver (`make test` installs both when it runs as root with apt).

`Browser.measure(url, width)` loads a page at a window `width` px wide and returns what the
layout tests assert on, measured with getBoundingClientRect in the page itself: the page's
height and widest element, and for each table row of the line items and input tables the
boxes of its cells. Screenshots go to `artifacts_dir()` (test-artifacts/, gitignored).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.examples import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
SKIP_REASON = (
    "Debian chromium and chromium-driver not installed (make test installs them when it can: "
    "apt-get install chromium chromium-driver)"
)

# What the page reports about itself, measured in the browser (CSS px).
MEASURE_JS = """
// every folded table unfolded (a candidate's input table); folded lists stay folded
for (const d of document.querySelectorAll('details:has(table)')) { d.open = true; }
const vw = document.documentElement.clientWidth;
let widest = {width: 0, what: ''};
for (const el of document.querySelectorAll('body *')) {
  const r = el.getBoundingClientRect();
  if (r.width > widest.width && getComputedStyle(el).position !== 'absolute') {
    widest = {width: r.width, what: el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
      + (el.className && typeof el.className === 'string' ? '.' + el.className : '')};
  }
}
const tables = {};
for (const t of document.querySelectorAll('table[data-table]')) {
  const rows = [];
  for (const tr of t.querySelectorAll('tbody tr')) {
    const box = tr.getBoundingClientRect();
    const cells = {};
    for (const td of tr.querySelectorAll('[data-col]')) {
      const r = td.getBoundingClientRect();
      const visible = getComputedStyle(td).display !== 'none';
      cells[td.dataset.col] = {left: r.left, right: r.right, width: r.width, visible: visible,
        overflow: td.scrollWidth - td.clientWidth};
    }
    rows.push({height: box.height, cells: cells, id: tr.id || '',
      pending: tr.classList.contains('pending-row')});
  }
  const wrap = t.closest('.table-wrap');
  tables[t.dataset.table + (t.dataset.candidate ? ':' + t.dataset.candidate : '')] = {
    rows: rows,
    scroll: wrap ? wrap.scrollWidth - wrap.clientWidth : 0,
    visible: t.getClientRects().length > 0,
  };
}
// every chart's text labels (an SVG <text> whose own text is not empty): their boxes, and the
// chart's, to tell a label cut at the chart's edge or lying on another one
const charts = {};
let n = 0;
for (const svg of document.querySelectorAll('svg.chart')) {
  if (svg.getClientRects().length === 0) { continue; }  // folded away
  const box = svg.getBoundingClientRect();
  const labels = [];
  for (const t of svg.querySelectorAll('text')) {
    const own = Array.from(t.childNodes).filter(c => c.nodeType === 3 || c.tagName === 'tspan')
      .map(c => c.textContent).join('').trim();
    if (!own) { continue; }
    const r = t.getBoundingClientRect();
    labels.push({text: own, cls: t.getAttribute('class') || '', left: r.left, right: r.right,
      top: r.top, bottom: r.bottom, height: r.height});
  }
  charts[(svg.id || 'chart') + '#' + (n++)] = {
    box: {left: box.left, right: box.right, top: box.top, bottom: box.bottom},
    labels: labels};
}
return {
  charts: charts,
  viewport: vw,
  pageWidth: document.documentElement.scrollWidth,
  pageHeight: document.documentElement.scrollHeight,
  widest: widest,
  tables: tables,
};
"""


def artifacts_dir() -> Path:
    """Where the screenshots are kept: $TRNCOST_TEST_ARTIFACTS, else test-artifacts/."""
    path = Path(os.environ.get("TRNCOST_TEST_ARTIFACTS") or ROOT / "test-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Layout:
    viewport: int
    page_width: int
    page_height: int
    widest: dict[str, Any]
    tables: dict[str, dict[str, Any]]
    charts: dict[str, dict[str, Any]] = field(default_factory=dict)
    screenshot: Path | None = None
    notes: list[str] = field(default_factory=list)


class Browser:
    """One headless chromium session (the window resized per measurement)."""

    def __init__(self, profile: Path) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--user-data-dir={profile}",
        ):
            options.add_argument(flag)
        self.driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                                       options=options)  # fmt: skip

    def close(self) -> None:
        self.driver.quit()

    def _set_width(self, width: int) -> None:
        # The window's outer size includes no chrome in headless mode; make the layout
        # viewport exactly `width` px wide whatever the platform adds.
        self.driver.set_window_size(width, 1000)
        inner = self.driver.execute_script("return document.documentElement.clientWidth")
        if inner and inner != width:
            self.driver.set_window_size(2 * width - inner, 1000)

    def measure(self, url: str, width: int, shot: Path | None = None) -> Layout:
        self.driver.get("about:blank")
        self._set_width(width)
        self.driver.get(url)
        self._set_width(width)
        found = self.driver.execute_script(MEASURE_JS)
        layout = Layout(
            viewport=int(found["viewport"]),
            page_width=int(found["pageWidth"]),
            page_height=int(found["pageHeight"]),
            widest=found["widest"],
            tables=found["tables"],
            charts=found.get("charts") or {},
        )
        if shot is not None:
            # The whole page in one picture: the window as tall as the page (capped).
            self.driver.set_window_size(width, min(layout.page_height + 100, 16_000))
            self.driver.save_screenshot(str(shot))
            layout.screenshot = shot
        return layout
