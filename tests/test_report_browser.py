"""The report page in a real headless browser: Debian's Chromium driven by Selenium through
Debian's chromedriver (no browser download). It renders without console errors, the timeline has
one row per Worker, a Worker expands to its ranks, and a screenshot is saved for CI to keep
($LOGSCAN_ARTIFACTS, default a folder under the system's temporary directory: outside the work
tree, never committed).

Skipped, saying why, only where no browser can be installed: no chromium/chromedriver on PATH or
no selenium. On CI (`CI=true`) a missing browser fails instead, since .ci/run installs it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import render_html
from test_human_report import diagnosed

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
ARTIFACTS = Path(os.environ.get("LOGSCAN_ARTIFACTS") or Path(tempfile.gettempdir()) / "logscan-artifacts")


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    if not CHROMIUM or not CHROMEDRIVER:
        return "no headless browser: apt-get install chromium chromium-driver"
    return None


@pytest.fixture(scope="module")
def browser():
    why = _missing()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI installs the browser in .ci/run, but {why}")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.parametrize("sample", ["restart-loop", "healthy-timestamps"])
def test_page_renders_in_chromium(browser, sample, tmp_path):
    from selenium.webdriver.common.by import By

    d = diagnosed(sample)
    page = tmp_path / f"{sample}.html"
    page.write_text(render_html(d), encoding="utf-8")
    browser.get(page.as_uri())
    assert browser.title.startswith("logscan:")
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors
    rows = browser.find_elements(By.CSS_SELECTOR, "details.worker-row")
    assert len(rows) == len(d.workers)
    assert all(row.is_displayed() and row.size["height"] > 10 for row in rows)
    # a Worker expands to one row per rank it ran
    closed = [row for row in rows if row.get_attribute("open") is None]
    if closed:
        closed[0].find_element(By.TAG_NAME, "summary").click()
        ranks = closed[0].find_elements(By.CSS_SELECTOR, ".tl-row.rank")
        assert ranks and ranks[0].is_displayed()
    marks = browser.find_elements(By.CSS_SELECTOR, ".timeline .mark")
    assert marks and all(0 <= m.location["x"] <= 1280 for m in marks)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"report-{sample}.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


@pytest.mark.parametrize("sample", ["stall-mid-training", "healthy-timestamps"])
def test_timeline_headings_do_not_overlap_at_800_px(browser, sample, tmp_path):
    from selenium.webdriver.common.by import By

    page = tmp_path / f"{sample}.html"
    page.write_text(render_html(diagnosed(sample)), encoding="utf-8")
    browser.set_window_size(800, 1000)
    try:
        browser.get(page.as_uri())
        ticks = browser.find_elements(By.CSS_SELECTOR, ".axis .ticks span")
        assert len(ticks) >= 2
        boxes = [t.rect for t in ticks]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                apart = (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                         or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])
                assert apart, (sample, a, b)
        axis = browser.find_element(By.CSS_SELECTOR, ".axis").rect
        assert all(axis["x"] <= box["x"] and box["x"] + box["width"] <= axis["x"] + axis["width"] + 1
                   for box in boxes)
    finally:
        browser.set_window_size(1280, 1000)
