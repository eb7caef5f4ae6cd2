"""Chart sizes as a browser draws them (issue 60 items 1 and 2), in headless Chromium over the DevTools protocol
(tests/test_dashboard_e2e.py's Browser): a three-entrant tournament's Nash heat map is sized from its cells, not
squeezed into 144 px with its labels and legend; the distillation charts are 300 px tall, not 220."""

from __future__ import annotations

import time

import pytest
from dashboard_fixture import write_distill_run
from dashboard_leagues import build_sparse_league
from test_dashboard_e2e import CHROMIUM, RENDER_TIMEOUT, Browser, serving, wait_until

pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"),
              pytest.mark.slow]
CHART_SIZES = ("Array.from(document.querySelectorAll('.vega-embed')).map(e => { const r = e.getBoundingClientRect(); "
               "return [Math.round(r.width), Math.round(r.height)]; })")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    sparse = build_sparse_league(tmp_path_factory.mktemp("layout") / "league")
    write_distill_run(sparse.home)
    with serving(sparse.home.root, tmp_path_factory.mktemp("layout-log")) as base:
        browser = Browser(tmp_path_factory.mktemp("layout-profile"))
        try:
            yield base, sparse, browser
        finally:
            browser.close()


def sizes(browser, count: int) -> list[list[int]]:
    return wait_until(lambda: (lambda s: s if s and len(s) >= count and all(h > 50 for _, h in s) else None)(
        browser.evaluate(CHART_SIZES)), RENDER_TIMEOUT, f"{count} charts drawn")


def test_a_small_tournaments_heat_map_has_room_for_its_cells_labels_and_legend(served):
    base, sparse, browser = served
    browser.goto(f"{base}/?page=nash&tournament={sparse.partial}")
    browser.wait_for_text(["Nash averaging", f"in tournament #{sparse.partial} three"])
    time.sleep(1.0)
    ((width, height),) = sizes(browser, 1)
    assert height >= 3 * 120 and width >= 3 * 120 + 100  # the cells, the row labels and the legend beside them


def test_distillation_charts_are_tall_enough_to_read(served):
    base, _, browser = served
    browser.goto(f"{base}/?page=training")
    browser.wait_for_text(["Distillation", "score rate against the teacher"])
    time.sleep(1.0)
    drawn = sizes(browser, 4)
    assert all(h >= 300 for _, h in drawn[:4]), drawn  # was 220, legend included
