"""The fork server our workers start from loads, once, the modules of every pool kind asked for before
it started (arena.engine.procs.worker_context), so a worker does not import its class's module anew."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# A fresh process (the suite's own fork server is already running): two pools' modules asked for one
# after the other, then a worker reports which of them it found loaded when it started.
PROBE = """
import sys
from arena.engine.procs import worker_context
from forkserver_probe import loaded
worker_context(["wave"])
ctx = worker_context(["colorsys"])
here, there = ctx.Pipe()
proc = ctx.Process(target=loaded, args=(there, ["wave", "colorsys", "imghdr"]))
proc.start()
print(here.recv())
proc.join()
"""


def test_the_fork_server_loads_every_pool_kinds_module_asked_for_before_it_started():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO / "tests", capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": f"{REPO}:{REPO / 'tests'}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['wave',", "'colorsys']"]  # both kept; a module never asked for is not there
