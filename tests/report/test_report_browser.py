"""The HTML report in a real headless Chromium (Debian's chromium + chromium-driver, installed by
``make browser`` as root): it loads from file:// with no console error, the injected ``<script>`` shows as text
and never runs, the numbers on the page are those of the results file, and a failed fact check shows its
explanation. Without the browser these fail, unless ``make test`` found no way to install it and said so in
``NLGEVAL_BROWSER_SKIP``: then they are skipped with that reason."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from pytest_nlgeval.report import load_results, write_html
from paths import DATA

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
PAYLOAD = "<script>alert(1)</script>"
# Runs before any script of every page; if a script on the page ever calls alert, the title says so.
TRAP = "window.alert = function () { document.title = 'ALERT-CALLED'; window.__alerted = true; };"

pytestmark = pytest.mark.xdist_group("browser")  # one browser for all of these tests under -n


@pytest.fixture(scope="session")  # session: xdist interleaves modules, a module fixture would restart
def browser():
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        reason = os.environ.get("NLGEVAL_BROWSER_SKIP")
        if reason:  # `make test` run by a user who cannot install system packages says why
            pytest.skip(f"browser tests: {reason}")
        pytest.fail(
            f"{CHROMIUM} and {CHROMEDRIVER} are needed: run `make browser` (Debian packages chromium, chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="nlgeval-chromium-")
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
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--window-size=1280,1600",
    ):
        options.add_argument(arg)
    options.binary_location = str(CHROMIUM)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: Selenium Manager never tries to download a driver or a browser.
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TRAP})
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver, path: Path) -> list[dict]:
    driver.get(path.resolve().as_uri())
    return driver.get_log("browser")  # also clears the log for the next page


def no_alert(driver) -> bool:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        driver.switch_to.alert
    except NoAlertPresentException:
        pass
    else:
        return False
    return driver.execute_script("return window.__alerted === undefined") and driver.title != "ALERT-CALLED"


def test_report_renders_without_errors_and_payload_is_inert(browser, tmp_path):
    from selenium.webdriver.common.by import By

    results = load_results(DATA / "report_results.json")
    page = write_html(results, tmp_path / "report.html")
    log = open_page(browser, page)
    browser.save_screenshot(str(tmp_path / "report.png"))
    assert (tmp_path / "report.png").stat().st_size > 10_000

    assert [entry for entry in log if entry["level"] in ("SEVERE", "WARNING")] == []
    assert browser.title == "pytest-nlgeval report"
    assert no_alert(browser)
    assert browser.execute_script("return document.scripts.length") == 0
    # The payload is on the page as text, inside the checks table.
    texts = [e.get_attribute("textContent") for e in browser.find_elements(By.CSS_SELECTOR, "#checks pre.text")]
    assert any(PAYLOAD in text for text in texts)

    for name in ("checks", "passed", "failed"):
        assert browser.find_element(By.ID, f"summary-{name}").text == str(results["summary"][name])
    counts = results["baseline"]["counts"]
    assert browser.find_element(By.ID, "summary-regressions").text == str(
        counts["regressions"] + counts["suite_regressions"]
    )
    rows = browser.find_elements(By.CSS_SELECTOR, "#checks-table > tbody > tr")
    assert len(rows) == len(results["checks"])
    assert [r.get_attribute("class") for r in rows[:9]] == ["failed"] * results["summary"]["failed"]


def test_long_text_expands_on_click(browser, tmp_path):
    from selenium.webdriver.common.by import By

    page = write_html(load_results(DATA / "report_results.json"), tmp_path / "report.html")
    open_page(browser, page)
    row = browser.find_element(By.CSS_SELECTOR, "#checks-table tr[data-key$='test_summary_quality[0]::consistency::0']")
    row.find_element(By.CSS_SELECTOR, "details.check > summary").click()
    long_text = row.find_element(By.CSS_SELECTOR, "details.long")
    full = long_text.find_element(By.CSS_SELECTOR, "pre.text")
    assert not full.is_displayed()
    long_text.find_element(By.TAG_NAME, "summary").click()
    assert full.is_displayed() and len(full.text) > 600


def test_the_checks_can_fail(browser, tmp_path):
    """Negative control: a page that does run the payload is caught by the same checks."""
    unsafe = tmp_path / "unsafe.html"
    unsafe.write_text(
        f"<!DOCTYPE html><html><head><title>t</title></head><body>{PAYLOAD}"
        "<script>undefinedFunction()</script></body></html>"
    )
    log = open_page(browser, unsafe)
    assert not no_alert(browser)
    assert any(entry["level"] == "SEVERE" for entry in log)


def test_sections_of_installed_plugins_render_cleanly(browser, tmp_path):
    """The sections other plugins add (found through the pytest11 entry points) load without errors too."""
    from selenium.webdriver.common.by import By

    from pytest_nlgeval.report.sections import collect_sections

    results = load_results(DATA / "report_results.json")
    sections = collect_sections(results, autoload=True)
    page = write_html(results, tmp_path / "report.html", sections=sections)
    log = open_page(browser, page)
    assert [entry for entry in log if entry["level"] in ("SEVERE", "WARNING")] == []
    assert no_alert(browser)
    shown = [e.get_attribute("id") for e in browser.find_elements(By.CSS_SELECTOR, "section.extra")]
    assert [s.id for s in sections if s.id not in shown] == []


def test_a_failed_fact_check_shows_its_explanation(browser, tmp_path):
    """The weakest claim, the unsupported span with what the source says and the deciding window are on the
    page, visible without opening anything, and they are the lines of the terminal's message."""
    from selenium.webdriver.common.by import By

    from fact_case import MUST_SAY, OUTPUT, SOURCE
    from pytest_nlgeval.core.checks import CheckRecorder
    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.plugin import build_results

    recorder = CheckRecorder()
    recorder.start_test("test_facts.py::test_summary_is_faithful")
    score = Evaluator(cache=False).score(OUTPUT, "consistency", source=SOURCE, recorder=recorder)
    with pytest.raises(AssertionError) as failure:
        score > 0.45
    recorder.end_test()
    local = {"checks": [c.to_dict() for c in recorder.checks], "evaluators": recorder.evaluators, "scoring": {}}
    page = write_html(
        build_results([local], {"test_facts.py::test_summary_is_faithful": "failed"}), tmp_path / "r.html"
    )
    log = open_page(browser, page)
    assert [entry for entry in log if entry["level"] in ("SEVERE", "WARNING")] == []

    row = browser.find_element(
        By.CSS_SELECTOR, "#checks-table tr[data-key$='test_summary_is_faithful::consistency::0']"
    )
    explanation = row.find_element(By.CSS_SELECTOR, "ul.explanation")
    assert explanation.is_displayed()
    lines = [item.text for item in explanation.find_elements(By.TAG_NAME, "li")]
    message = str(failure.value)
    for phrase in MUST_SAY:
        assert any(phrase in line for line in lines), (phrase, lines)
    for line in lines:
        assert line in message, f"the page says {line!r}, the terminal does not"
