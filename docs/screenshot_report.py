"""Render a results file as the HTML report and screenshot it in headless Chromium (for docs/report.png).

    python docs/screenshot_report.py tests/data/report_results.json docs/report.png [--height 1700]

Needs Debian's chromium and chromium-driver (`make browser`) and selenium (requirements-dev.txt).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="results file (pytest --nlgeval-json)")
    parser.add_argument("png", help="screenshot to write")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1700)
    args = parser.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from pytest_nlgeval.report import load_results, write_html

    work = Path(tempfile.mkdtemp(prefix="nlgeval-shot-"))
    try:
        page = write_html(load_results(args.results), work / "report.html")
        options = webdriver.ChromeOptions()
        for arg in (
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={work / 'profile'}",
            f"--window-size={args.width},{args.height}",
        ):
            options.add_argument(arg)
        options.binary_location = "/usr/bin/chromium"
        driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
        try:
            driver.get(page.resolve().as_uri())
            driver.save_screenshot(args.png)
        finally:
            driver.quit()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
