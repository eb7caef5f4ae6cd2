"""Hostile bot files a few kilobytes to a few megabytes long (issue 47, items 1-6): `league bot add`
refuses each in one sentence with exit 2, in bounded time and memory. Each command runs in a forked
child of one process (tests/cli_probe.py), so its peak memory is compared with the real Element's
`bot add` measured the same way in the same run."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import community_bombs as bombs
from community_bots import bots_dir

MAX_EXTRA_MB = 256  # a refusal may peak this much above the real Element's add
MAX_SECONDS = 15.0  # the real Element add takes under 1 s here, once the command is imported
TIMEOUT_S = 40  # a child still running then is killed (so a regression fails, never hangs)

BUILDERS = {
    "memo": bombs.memo_amplification,
    "zip-deflate": bombs.zip_expansion,
    "zip-bzip2": lambda root: bombs.zip_expansion(root, members=2, member_mib=128, method=zipfile.ZIP_BZIP2),
    "opcodes": bombs.opcode_flood,
    "deep": bombs.deep_tuple_key,
    "walk": bombs.exponential_walk,
    "rescan": bombs.code_rescan,
}


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """{case: (description, file bytes, the probe's run)} for every hostile file and the real Element."""
    root = tmp_path_factory.mktemp("bombs")
    home = root / "home"
    cases = {"element": ("element", bots_dir() / "Element", "the real Element folder")}
    cases.update({name: build(root) for name, build in BUILDERS.items()})
    runs = [["init", "--home", str(home)]]
    runs += [["bot", "add", kind, str(folder), "--home", str(home), "--name", f"b-{name}"]
             for name, (kind, folder, _) in cases.items()]
    spec = root / "cases.json"
    spec.write_text(json.dumps({"timeout_s": TIMEOUT_S, "runs": runs}))
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("cli_probe.py")), str(spec)],
                          capture_output=True, text=True, timeout=TIMEOUT_S * len(runs) + 120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["runs"][0]["exit"] == 0, report["runs"][0]
    out = {}
    reference_kb = report["runs"][1]["peak_kb"]
    for (name, (_kind, folder, what)), run in zip(cases.items(), report["runs"][1:]):
        size = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file() and p.suffix in (".p", ".pt"))
        run["extra_mb"] = (run["peak_kb"] - reference_kb) / 1024
        out[name] = (what, size, run)
    print("\n".join(f"{n}: {w} ({s:,} bytes): exit {r['exit']} signal {r['signal']}, {r['seconds']:.2f} s, "
                    f"peak {r['peak_kb'] / 1024:.0f} MB ({r['extra_mb']:+.0f} MB)" for n, (w, s, r) in out.items()))
    return out


def test_the_real_element_is_added_within_the_same_bounds(measured):
    _, _, run = measured["element"]
    assert run["exit"] == 0, run["stderr"]
    assert run["seconds"] < MAX_SECONDS


@pytest.mark.parametrize("case, says", [
    ("memo", "Element's weights"),  # read once, then the adapter refuses 700 copies of one tensor
    ("zip-deflate", "past"),
    ("zip-bzip2", "compressed by method 12"),
    ("opcodes", "opcodes"),
    ("deep", "nests values more than"),
    ("walk", "reached twice"),
    ("rescan", "Necto's weights"),  # every class read from one parse; the adapter refuses no tensors
])
def test_hostile_file_is_one_sentence_in_bounded_time_and_memory(measured, case, says):
    what, size, run = measured[case]
    assert run["signal"] is None, f"{what}: killed by signal {run['signal']} after {run['seconds']} s"
    assert run["exit"] == 2, (what, run["stderr"][-2000:])
    lines = run["stderr"].strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(".") and len(lines[0]) < 600, run["stderr"][:2000]
    assert says in lines[0], lines[0]
    assert run["seconds"] < MAX_SECONDS, f"{what}: {run['seconds']} s"
    assert run["extra_mb"] < MAX_EXTRA_MB, f"{what} ({size} bytes): {run['extra_mb']:.0f} MB above the real add"
