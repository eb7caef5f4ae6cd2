"""What reading a replay may cost and say (issue 56, items 2, 8, 13 and 15): its header read without
inflating its arrays, a reader's budget refused before they are inflated, `league replay play`
checking --from and the viewer before it decodes, and the sentences a replay's faults end in."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from arena.replay import ReadBudget, ReplayOverBudget, read_replay, read_replay_header, write_replay
from dashboard_fixture import synthetic_replay
from league.cli import app
from league.errors import LeagueError
from replay_bounds import write_bound_replay

CLI_PROBE = str(Path(__file__).with_name("cli_probe.py"))


@pytest.fixture(scope="module")
def bound_file(tmp_path_factory) -> Path:
    return write_bound_replay(tmp_path_factory.mktemp("bound") / "bound.replay")


@pytest.fixture(scope="module")
def short_file(tmp_path_factory) -> Path:
    """A 6.67 s game: 100 steps at tick skip 8 (100 * 8 / 120 s)."""
    path = tmp_path_factory.mktemp("short") / "short.replay"
    replay = synthetic_replay(1, "rule", "atba", 1, 0, 0, 99 * 8 / 120)
    assert replay.steps == 100
    write_replay(path, replay)
    return path


def one_sentence(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and text.endswith("."), text
    return text


def peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_replays_header_is_read_without_inflating_its_arrays(bound_file, short_file):
    header = read_replay_header(short_file)
    replay = read_replay(short_file)
    assert (header.steps, header.events, header.meta) == (replay.steps, len(replay.events), replay.meta)
    assert header.seconds() == pytest.approx(100 * 8 / 120)
    assert peak_bytes(lambda: read_replay_header(bound_file)) < 8 << 20  # 432,000 steps: 62 MB of cars inflated


def test_a_replay_over_a_readers_budget_is_refused_before_it_is_inflated(bound_file):
    budget = ReadBudget(steps=72_000, events=20_000)
    with pytest.raises(ReplayOverBudget) as exc:
        tracemalloc.start()
        try:
            read_replay(bound_file, budget)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    assert "432,000 steps" in one_sentence(exc) and exc.value.header.steps == 432_000
    assert peak < 8 << 20, peak


def write_members(path: Path, **changed) -> Path:
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files} | changed
    out = path.with_name("changed.replay")
    with open(out, "wb") as f:
        np.savez_compressed(f, **arrays)
    return out


def test_a_fortran_ordered_member_is_named_as_such(short_file):
    # Before: "its 'boost' member holds uint8 values, not uint8".
    with np.load(short_file) as z:
        boost = np.asfortranarray(z["boost"])
    path = write_members(short_file, boost=boost)
    with pytest.raises(LeagueError) as exc:
        read_replay(path)
    text = one_sentence(exc)
    assert "'boost' member is stored in Fortran (column-major) order" in text and "not uint8" not in text


def test_a_replays_version_is_quoted_cut_to_80_characters(short_file):
    with np.load(short_file) as z:
        meta = json.loads(z["meta"].tobytes())
    meta["version"] = "9" * 10_000
    path = write_members(short_file, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))
    with pytest.raises(LeagueError) as exc:
        read_replay(path)
    text = one_sentence(exc)
    assert "9" * 81 not in text and "characters in all" in text and len(text) < 400, text[:500]


# --------------------------------------------------------------------------- league replay play


def unused_udp_port() -> int:
    """A UDP port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def league(tmp_path, *runs: list[str]) -> list[dict]:
    """`league` commands in forked children of one process (tests/cli_probe.py): exit code, stderr, peak memory."""
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"timeout_s": 120, "runs": [[str(a) for a in run] for run in runs]}))
    done = subprocess.run([sys.executable, CLI_PROBE, str(cases)], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).parents[1])
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)["runs"]


def refused_in_one_sentence(run: dict) -> str:
    text = run["stderr"].strip()
    assert run["exit"] == 2 and "Traceback" not in text, run
    return " ".join(text.split())


@pytest.mark.parametrize("start", ["1e308", "7", "6.67"])
def test_replay_play_says_the_replays_own_length(short_file, start):
    # Before: 1e308 was an OverflowError traceback, and 7 said "past the replay's end (7 s)" of a 6.67 s replay.
    result = CliRunner().invoke(app, ["replay", "play", str(short_file), "--viewer", "rocketsimvis", "--from", start])
    assert result.exit_code == 2 and not isinstance(result.exception, OverflowError), result.output
    said = " ".join(result.output.split())
    assert f"--from {float(start):g} is past the replay's end (6.67 s)." in said, said


def test_replay_play_looks_for_the_viewer_before_decoding(tmp_path, bound_file, short_file):
    port = unused_udp_port()
    short, bound = league(tmp_path, ["replay", "play", short_file, "--viewer", "rocketsimvis", "--viewer-port", port],
                          ["replay", "play", bound_file, "--viewer", "rocketsimvis", "--viewer-port", port])
    for run in (short, bound):
        assert f"nothing listens on 127.0.0.1:{port}" in refused_in_one_sentence(run)
    # Before: the 432,000-step replay was decoded (a 780 MB peak) before the viewer was looked for.
    assert bound["peak_kb"] - short["peak_kb"] < 64 * 1024, (bound["peak_kb"], short["peak_kb"])
