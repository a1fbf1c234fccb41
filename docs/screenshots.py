"""Retake the README's screenshots from the real samples: docs/report-terminal.png (the terminal
report of sample_logs/restart-loop with --timeline, 100 columns, in colour) and docs/report-html.png
(the page of sample_logs/stall-mid-training, 1280 x 1000).

    python docs/screenshots.py

Needs what tests/test_report_browser.py needs: selenium and Debian's chromium and chromedriver. The
terminal report is drawn by rich (export_svg) and the SVG photographed by the same browser, so
both pictures come from one tool chain and nothing is drawn by hand.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.text import Text

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
# Later than any sample was written: a post-mortem's view of the logs.
NOW = "2030-01-01T00:00:00Z"
TERMINAL_COLUMNS = 100


def _diagnosis(sample: str):
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.settings import Settings, parse_time

    os.chdir(REPO / "sample_logs")  # paths shown as typed: `restart-loop/worker-0/launch_ddp.log`
    return diagnose_paths([sample], Settings(now=parse_time(NOW)))


def _browser(width: int, height: int):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        sys.exit("docs/screenshots.py: no headless browser: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 f"--window-size={width},{height}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=options)


def terminal(out: Path) -> None:
    from logscan.render import render
    from logscan.render.context import RenderContext

    report = render("human", _diagnosis("restart-loop"),
                    RenderContext(color=True, width=TERMINAL_COLUMNS, timeline=True))
    console = Console(record=True, width=TERMINAL_COLUMNS, file=open(os.devnull, "w"),
                      force_terminal=True, color_system="truecolor")
    console.print(Text.from_ansi(report.rstrip("\n")), soft_wrap=True)
    drawing = console.export_svg(title="logscan scan sample_logs/restart-loop --timeline")
    # Photographed at its own size: the window is the drawing's viewBox, so nothing is scaled.
    width, height = (math.ceil(float(v)) for v in
                     re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', drawing).groups())
    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "terminal.html"
        svg.write_text(f'<!DOCTYPE html><body style="margin:0"><div style="width:{width}px">'
                       f"{drawing}</div></body>", encoding="utf-8")
        browser = _browser(width, height + 300)  # room for the window's own frame
        try:
            browser.get(svg.as_uri())
            browser.find_element("css selector", "svg").screenshot(str(out))
        finally:
            browser.quit()


def page(out: Path) -> None:
    from logscan.render import render

    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "report.html"
        html.write_text(render("html", _diagnosis("stall-mid-training")), encoding="utf-8")
        browser = _browser(1280, 1150)
        try:
            browser.get(html.as_uri())
            browser.save_screenshot(str(out))
        finally:
            browser.quit()


if __name__ == "__main__":
    terminal(DOCS / "report-terminal.png")
    page(DOCS / "report-html.png")
    print(f"wrote {DOCS / 'report-terminal.png'} and {DOCS / 'report-html.png'}")
