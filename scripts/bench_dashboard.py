"""Page load times of the dashboard on a big league (default: 200 agents, 20,000 games).

    python scripts/bench_dashboard.py [--agents 200] [--games 20000] [--repeat 3] [--home DIR]

Builds the league with tests/dashboard_fixture.build_scaled_league (or reuses --home if it
already holds one), then renders every page with Streamlit's AppTest: "cold" with every cache
cleared first (a first visit, or the first after the cache expired), "warm" straight after (a
rerun from a widget change within the cache's TTL). Times are the median of --repeat runs, and
are also given as a multiple of a reference measured in the same run: AppTest rendering a
one-line app, i.e. the harness's own cost.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboard_fixture import build_scaled_league  # noqa: E402

APP = str(ROOT / "dashboard" / "app.py")
PAGES = ("leaderboard", "history", "head-to-head", "lineage", "tournaments", "replays", "training")


def clear_caches() -> None:
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


def render(page: str, query: dict[str, str]) -> float:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["page"] = page
    for k, v in query.items():
        at.query_params[k] = v
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise SystemExit(f"page {page} raised: {at.exception[0].value}")
    if at.error:
        raise SystemExit(f"page {page} showed an error: {at.error[0].value}")
    return elapsed


def reference() -> float:
    at = AppTest.from_string("import streamlit as st\nst.write('reference')", default_timeout=60)
    start = time.perf_counter()
    at.run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--home", type=Path, help="Build the league here (reused if it already exists).")
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="bench-dashboard-")) / "league"
    replay_game = None
    if (home / "league.db").is_file():
        print(f"Reusing the league at {home}")
    else:
        start = time.perf_counter()
        league = build_scaled_league(home, n_agents=args.agents, n_games=args.games)
        replay_game = league.replay_games[0]
        print(f"Built {league.agents} agents / {league.games:,} games at {home} in {time.perf_counter() - start:.1f} s")
    os.environ["LEAGUE_HOME"] = str(home)
    if replay_game is None:
        import sqlite3

        with sqlite3.connect(f"file:{home / 'league.db'}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT id, replay_path FROM games WHERE replay_path IS NOT NULL ORDER BY id DESC")
            replay_game = next(gid for gid, path in rows if (home / path).is_file())

    reference()  # warm-up: imports
    for name in list(logging.Logger.manager.loggerDict):  # quiet AppTest's bare-mode notices
        if name.startswith("streamlit"):
            logging.getLogger(name).setLevel(logging.ERROR)
    for page in PAGES:  # warm-up: first-use costs (imports, chart compilers) are not a page's
        render(page, {"game": str(replay_game)} if page == "replays" else {})
    ref = statistics.median(reference() for _ in range(args.repeat))
    print(f"reference (one-line app): {ref * 1000:.0f} ms\n")
    print(f"{'page':<14} {'cold ms':>9} {'warm ms':>9} {'cold/ref':>9} {'warm/ref':>9}")
    for page in PAGES:
        query = {"game": str(replay_game)} if page == "replays" else {}
        cold, warm = [], []
        for _ in range(args.repeat):
            clear_caches()
            cold.append(render(page, query))
            warm.append(render(page, query))
        c, w = statistics.median(cold), statistics.median(warm)
        print(f"{page:<14} {c * 1000:>9.0f} {w * 1000:>9.0f} {c / ref:>9.1f} {w / ref:>9.1f}")


if __name__ == "__main__":
    main()
