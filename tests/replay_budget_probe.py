"""Render one dashboard page on a replay with Streamlit's AppTest, in a process of its own, and
report what it cost: the page's seconds, the bytes of the player's HTML sent to the browser, the
process's peak memory (VmHWM, the high-water mark of this process's own memory since it started Python:
not ru_maxrss, which Linux carries over from the forked parent across exec, so a test worker's size
would be counted).

    python tests/replay_budget_probe.py HOME PAGE [GAME] [VIEWS]  ->  one JSON object on stdout:
        {"seconds", "page_bytes", "peak_mb", "errors", "exceptions", "iframes", "replay_cache_bytes"}

PAGE is "replays" (GAME: the game's id) or "live". VIEWS > 1 renders the page that many times,
touching the replay files between views (a live game is rewritten twice a second).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "dashboard" / "app.py")


def main(home: str, page: str, game: str = "", views: int = 1) -> dict:
    sys.path.insert(0, str(ROOT))  # this checkout's dashboard, whatever the environment installed
    from streamlit.testing.v1 import AppTest

    os.environ["LEAGUE_HOME"] = home
    replays = list(Path(home).glob("replays/*.replay")) + list(Path(home).glob("live/*.replay"))
    started = time.perf_counter()
    page_bytes = 0
    for view in range(views):
        if view:
            for path in replays:
                os.utime(path)
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params["page"] = page
        if game:
            at.query_params["game"] = game
        at.run()
        frames = at.get("iframe")
        page_bytes = max(page_bytes, sum(len(f.proto.srcdoc.encode()) for f in frames))
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 2), "page_bytes": page_bytes,
            "peak_mb": round(peak_kib() / 1024, 1),
            "errors": [e.value for e in at.error] + [w.value for w in at.warning],
            "exceptions": [str(e.value) for e in at.exception], "iframes": len(frames),
            "replay_cache_bytes": replay_cache_bytes()}


def peak_kib() -> int:
    """This process's peak resident memory in KiB (VmHWM: reset at exec, unlike ru_maxrss)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # no /proc: the next best figure


def replay_cache_bytes() -> int:
    """The bytes the dashboard's cache of replays holds now (every entry of dashboard.data's replay cache)."""
    from streamlit.runtime.caching.cache_data_api import _data_caches

    return sum(stat.byte_length for stats in _data_caches.get_stats().values() for stat in stats
               if "replay_view" in stat.cache_name)


if __name__ == "__main__":
    args = sys.argv[1:]
    print(json.dumps(main(args[0], args[1], args[2] if len(args) > 2 else "", int(args[3]) if len(args) > 3 else 1)))
