"""A real headless browser for the view's tests and bench: Debian's chromium driven by its chromedriver
(Selenium, a dev dependency), a fresh profile each time, nothing fetched from outside; and what the
tests read from the page."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--window-size=1400,1700"]
ROOT = Path(__file__).resolve().parents[1]  # the checkout
SCREENSHOTS = ROOT / "docs" / "figures" / "view"
UPDATE_ENV = "HITLESS_UPDATE_SCREENSHOTS"  # =1: the tests' screenshots replace those in docs/figures/view


def missing() -> list[str]:
    """Debian's chromium and chromedriver where absent (make setup installs them)."""
    return [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]


@contextmanager
def browser() -> Iterator[Any]:
    """A headless chromium session with a profile of its own, removed afterwards (driver.service.process:
    chromedriver, whose children are the browser)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="hitless-view-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(what: str, probe: Callable[[], Any], timeout: float = 30.0, period: float = 0.2) -> Any:
    """probe() once it is truthy; AssertionError naming `what` and its last value after `timeout`."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(period)
    raise AssertionError(f"{what}: not seen in {timeout:.0f} s (last: {value!r})")


def screenshot(driver: Any, folder: Path, name: str) -> Path:
    """The page as a PNG in folder (and in docs/figures/view with HITLESS_UPDATE_SCREENSHOTS=1)."""
    path = folder / f"{name}.png"
    driver.save_screenshot(str(path))
    if os.environ.get(UPDATE_ENV) == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, SCREENSHOTS / path.name)
    return path


# What the page draws, read from it (window.hitlessView holds the Cytoscape graph it shows).
SUMMARY = "const d = document.getElementById('summary').dataset; return [Number(d.switches), Number(d.lit)];"
LIT = "return window.hitlessView.cy.edges('.lit').map(e => e.id()).sort();"
TIMELINE = "return JSON.parse(document.getElementById('timeline').dataset.rows || '[]');"
PEAK_RATE = ("return Math.max(0, ...window.hitlessView.cy.edges().map(e => "
             "Math.max(0, ...String(e.data('label')).split(' / ').map(parseFloat).filter(x => !isNaN(x)))));")
SPANS = "return window.hitlessView.spans.size;"
# the replay's slider moved to the time (page seconds) a function of the view `v` returns, as a user drags it
SLIDE_TO = ("const v = window.hitlessView; const s = document.getElementById('slider');"
            "s.value = new Function('v', arguments[0])(v); s.dispatchEvent(new Event('input'));")
LABELS = "return window.hitlessView.cy.edges().map(e => String(e.data('label')));"
# the highest rate in the samples the page received, and the Mbit the busiest link carried one way
PEAK_SAMPLED = ("return Math.max(0, ...window.hitlessView.samples.flatMap(s => "
                "Object.values(s.links).flatMap(r => [r.forward, r.back])));")
CARRIED = ("const sum = {};"
           "for (const s of window.hitlessView.samples) for (const [id, r] of Object.entries(s.links)) {"
           "  sum[id + '>'] = (sum[id + '>'] || 0) + r.forward * r.seconds;"
           "  sum[id + '<'] = (sum[id + '<'] || 0) + r.back * r.seconds; }"
           "return Math.max(0, ...Object.values(sum));")
