"""Mistakes around the league home, on real files and the real `league` command: a file where the
home should be, a read-only home, another application's database, a disk that refuses a write.
Each ends in one sentence on stderr and exit code 2, and nothing already written is lost.

A read-only home is made real for whoever runs the tests: as root (who ignores permission bits)
through a read-only bind mount in a private mount namespace, as anyone else with chmod.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from league.cli import app
from league.registry import Registry

from conftest import play

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def text(result) -> str:
    return " ".join(result.output.split())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def league_process(*args, preexec: Callable[[], None] | None = None,
                   timeout: float = 180) -> subprocess.CompletedProcess:
    """`python -m league.cli ARGS` in a fresh process (under limits set by `preexec`)."""
    env = {k: v for k, v in os.environ.items() if k != "LEAGUE_HOME"}
    return subprocess.run([sys.executable, "-m", "league.cli", *map(str, args)], cwd=REPO, env=env,
                          preexec_fn=preexec, capture_output=True, text=True, timeout=timeout)


# --------------------------------------------------------------------------- a file where the home should be


@pytest.mark.parametrize("home", ["a-file", "a-file/below/league"])
def test_init_where_a_file_is_in_the_way_is_one_sentence(tmp_path, home):
    blocker = tmp_path / "a-file"
    blocker.write_text("someone's notes\n")
    result = run("init", "--home", tmp_path / home)
    assert result.exit_code == 2, result.output
    assert f"Cannot create the league home at {tmp_path / home}: {blocker} is a file" in text(result)
    assert blocker.read_text() == "someone's notes\n"


# --------------------------------------------------------------------------- another application's database


def foreign_database(path: Path) -> str:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    conn.execute("INSERT INTO notes (body) VALUES ('not a league')")
    conn.commit()
    conn.close()
    return sha256(path)


@pytest.mark.parametrize("command", ["agents", "show rule", "leaderboard", "lineage rule", "promote rule",
                                     "curriculum status", "init"])
def test_another_applications_database_is_refused_and_left_untouched(tmp_path, command):
    home = tmp_path / "home"
    home.mkdir()
    db = home / "league.db"
    before = foreign_database(db)
    result = run(*command.split(), "--home", home)
    assert result.exit_code == 2, result.output
    assert "another application's SQLite database" in text(result)
    assert sha256(db) == before
    assert sorted(p.name for p in home.iterdir()) == ["league.db"]  # no -wal, no league folders
    conn = sqlite3.connect(db)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["notes"]
    conn.close()


def test_registry_refuses_a_foreign_database_read_only_too(tmp_path):
    from league.errors import LeagueError

    db = tmp_path / "other.db"
    before = foreign_database(db)
    for opener in (lambda: Registry.open(db, readonly=True), lambda: Registry.open(db), lambda: Registry.create(db)):
        with pytest.raises(LeagueError, match="another application's SQLite database"):
            opener()
    assert sha256(db) == before


def test_an_empty_database_file_still_becomes_a_league(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "league.db").touch()
    result = run("init", "--home", home)
    assert result.exit_code == 0, result.output
    assert "rule" in run("agents", "--home", home).output


def test_a_read_command_still_upgrades_an_older_league_it_can_write(tmp_path):
    from league import schema
    from league.registry import connect

    home = tmp_path / "home"
    home.mkdir()
    db = connect(home / "league.db")
    schema.migrations.apply(db, stop_before="0002_payoff")  # a league created by the first release
    db.conn.close()
    result = run("agents", "--home", home)
    assert result.exit_code == 0, result.output
    reg = Registry.open(home / "league.db", readonly=True)
    assert schema.schema_version(reg.db) == schema.latest_version()
    reg.close()


# --------------------------------------------------------------------------- a read-only home

# Root ignores permission bits, so as root the home is made read-only for real: each command runs in
# a mount namespace of its own where the home is bind-mounted read-only over itself (writes fail with
# EROFS, as on a read-only share), and the mount goes away with the process.
READ_ONLY_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def read_only_prefix(root: Path) -> list[str]:
    """What runs a command with `root` read-only for it: a private read-only mount as root, nothing otherwise."""
    if os.geteuid() != 0:
        return []
    wrapper = ["unshare", "--mount", "--propagation", "private", "sh", "-c", READ_ONLY_MOUNT, "sh", str(root)]
    probe = subprocess.run([*wrapper, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"running as root, and a read-only bind mount is not permitted here: {probe.stderr.strip()}")
    return wrapper


@dataclass
class ReadOnlyHome:
    root: Path  # a league home the commands cannot write
    scratch: Path  # a folder they can write (an export's destination)
    checkpoint: Path  # a checkpoint outside the home
    prefix: list[str]  # what makes the home read-only for a command (see read_only_prefix)

    @property
    def db(self) -> Path:
        return self.root / "league.db"

    def run(self, *args: str | Path, timeout: float = 180) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "LEAGUE_HOME"}
        return subprocess.run([*self.prefix, sys.executable, *map(str, args)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=timeout)

    def league(self, *args: str | Path) -> subprocess.CompletedProcess:
        return self.run("-m", "league.cli", *args, "--home", self.root)

    def files(self) -> list[str]:
        return sorted(p.name for p in self.root.iterdir())


def _chmod_tree(root: Path, dirs: int, files: int) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(dirs if path.is_dir() else files)


@contextmanager
def read_only_home_at(tmp_path: Path) -> Iterator[ReadOnlyHome]:
    """A league home (two agents, one game) under `tmp_path` that commands run through it cannot write."""
    import torch

    from agents.checkpoint import save_checkpoint
    from agents.networks import build_network
    from league.config import PolicyConfig

    root, scratch, checkpoint = tmp_path / "league", tmp_path / "scratch", tmp_path / "outside" / "net.safetensors"
    assert run("init", "--home", root).exit_code == 0
    torch.manual_seed(0)
    policy = PolicyConfig(actor_sizes=[8], critic_sizes=[8])
    sha = save_checkpoint(root / "checkpoints" / "net", build_network(policy), steps=64)
    save_checkpoint(checkpoint.with_suffix(""), build_network(policy), steps=64)
    reg = Registry.open(root / "league.db")
    reg.agent_store.add("v1", "mlp", 1, checkpoint_path="checkpoints/net.safetensors", checkpoint_sha256=sha)
    reg.agent_store.add("v2", "mlp", 1, parent="v1")
    play(reg, "v1", "rule", 2, 1)
    reg.close()
    scratch.mkdir()
    assert not (root / "league.db-wal").exists() and not (root / "league.db-shm").exists()
    prefix = read_only_prefix(root)
    if not prefix:
        _chmod_tree(root, 0o555, 0o444)
    try:
        yield ReadOnlyHome(root, scratch, checkpoint, prefix)
    finally:
        _chmod_tree(root, 0o755, 0o644)  # so pytest can remove it


@pytest.fixture
def read_only_home(tmp_path):
    with read_only_home_at(tmp_path) as home:
        yield home


@pytest.mark.slow  # 6 s: every read command in its own process; the write refusals run by default
def test_read_commands_work_on_a_read_only_home(read_only_home):
    home = read_only_home
    before, files = sha256(home.db), home.files()
    for args, expected in (
        (["agents"], "v2"),
        (["show", "v2"], "v1"),
        (["leaderboard"], "v1"),
        (["lineage", "v2"], "v1"),
        (["curriculum", "status"], "No curriculum has run"),
        (["export", "v1", home.scratch / "out"], "Exported v1"),
    ):
        result = home.league(*args)
        assert result.returncode == 0, (args, result.stderr)
        assert expected in result.stdout, (args, result.stdout)
    assert (home.scratch / "out" / "v1.safetensors").is_file()
    assert sha256(home.db) == before and home.files() == files


def test_the_dashboard_reads_a_read_only_home(read_only_home):
    home = read_only_home
    code = ("import sys; from dashboard import data, queries; root = sys.argv[1]; data.open_league(root); "
            "print(queries.summary(root)); print(sorted(queries.agents(root)['name']))")
    result = home.run("-c", code, home.root)
    assert result.returncode == 0, result.stderr
    assert "'games': 1" in result.stdout and "'v2'" in result.stdout, result.stdout


WRITE_COMMANDS = ["promote v2", "init", "import CHECKPOINT --name striker --stage 1v1", "tournament --games 1",
                  "train --steps 64"]

# Runs each command of argv[2] (JSON: name -> arguments) in this one process, as `league ARGS --home argv[1]`
# does, and prints, per command, its exit code, stderr, the database's SHA-256 and the home's files after it.
REFUSING = """
import hashlib, json, sys, traceback
from pathlib import Path
from typer.testing import CliRunner
from league.cli import app
root, commands, done = Path(sys.argv[1]), json.loads(sys.argv[2]), {}
for name, args in commands.items():
    result = CliRunner().invoke(app, [*args, "--home", str(root)])
    bug = isinstance(result.exception, Exception)  # not the SystemExit of a handled error
    done[name] = {"exit_code": result.exit_code, "stdout": result.stdout,
                  "stderr": result.stderr + ("".join(traceback.format_exception(result.exception)) if bug else ""),
                  "db": hashlib.sha256((root / "league.db").read_bytes()).hexdigest(),
                  "files": sorted(p.name for p in root.iterdir())}
print(json.dumps(done))
"""


@pytest.fixture(scope="module")
def write_refusals(tmp_path_factory):
    """Every write command, run on one read-only home in one process (a process start imports torch, ~2 s):
    the home before, and each command's result."""
    with read_only_home_at(tmp_path_factory.mktemp("read-only")) as home:
        before, files = sha256(home.db), home.files()
        commands = {c: [str(home.checkpoint) if a == "CHECKPOINT" else a for a in c.split()] for c in WRITE_COMMANDS}
        done = home.run("-c", REFUSING, home.root, json.dumps(commands))
        assert done.returncode == 0, done.stderr
        yield before, files, json.loads(done.stdout.splitlines()[-1]), home.root


@pytest.mark.parametrize("command", WRITE_COMMANDS)
def test_write_commands_on_a_read_only_home_say_so(write_refusals, command):
    before, files, done, root = write_refusals
    result = done[command]
    assert result["exit_code"] == 2, (result["stdout"], result["stderr"])
    line = one_error_line(result["stderr"])
    assert f"The league home {root} is read-only" in line
    assert "not a league database" not in line
    assert result["db"] == before and result["files"] == files


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file, so there is no unreadable database for it")
def test_an_unreadable_database_is_not_called_foreign(read_only_home):
    home = read_only_home
    home.db.chmod(0)
    result = home.league("agents")
    assert result.returncode == 2
    line = one_error_line(result.stderr)
    assert f"Cannot read the league database {home.db}" in line and "not a league database" not in line


# --------------------------------------------------------------------------- a disk that refuses a write


def file_size_limit(limit_bytes: int) -> Callable[[], None]:
    """A child whose files may not grow beyond `limit_bytes`: writes fail with EFBIG (SIGXFSZ ignored)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return limit


def test_a_database_write_the_disk_refuses_is_one_sentence(tmp_path):
    home = tmp_path / "home"
    result = league_process("init", "--home", home, preexec=file_size_limit(16 * 1024))
    assert result.returncode == 2, (result.stdout, result.stderr)
    line = one_error_line(result.stderr)
    assert str(home / "league.db") in line, line
    again = run("init", "--home", home)  # with room again, the same command finishes the league
    assert again.exit_code == 0, again.output
    assert "rule" in run("agents", "--home", home).output


def test_a_file_write_the_disk_refuses_is_one_sentence_and_keeps_the_old_file(tmp_path):
    home, small, big = tmp_path / "home", tmp_path / "small.yaml", tmp_path / "big.yaml"
    small.write_text("ratings:\n  elo:\n    k_factor: 10\n")
    big.write_text("# " + "padding " * 64 * 1024 + "\nratings:\n  elo:\n    k_factor: 12\n")  # 512 KiB
    assert run("init", "--home", home, "--config", small).exit_code == 0
    result = league_process("init", "--home", home, "--config", big, preexec=file_size_limit(256 * 1024))
    assert result.returncode == 2, (result.stdout, result.stderr)
    line = one_error_line(result.stderr)
    assert "File too large" in line, line
    assert (home / "config.yaml").read_text() == small.read_text()  # the league's config is not cut short
    assert sorted(p.name for p in home.iterdir()) == ["checkpoints", "config.yaml", "league.db", "locks", "replays", "runs"]


# A command as small as can be, wrapped like every `league` command: it writes SIZE bytes to PATH.
WRITING_COMMAND = """
import typer
from league.cli.common import handles_errors
app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
@app.command()
@handles_errors
def write(path: str, size: int) -> None:
    with open(path, "wb") as fh:
        fh.write(b"x" * size)
app()
"""


def test_any_write_the_machine_refuses_is_one_sentence_and_a_bug_keeps_its_traceback(tmp_path):
    def writing(path: Path, size: int) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", WRITING_COMMAND, str(path), str(size)], cwd=REPO,
                              preexec_fn=file_size_limit(64 * 1024), capture_output=True, text=True, timeout=60)

    refused = writing(tmp_path / "big.bin", 1024 * 1024)
    assert refused.returncode == 2, refused.stderr
    assert "File too large" in one_error_line(refused.stderr)
    bug = writing(tmp_path / "no-such-folder" / "small.bin", 16)  # a path the code got wrong: not the machine's doing
    assert bug.returncode == 1 and "Traceback" in bug.stderr and "FileNotFoundError" in bug.stderr


# --------------------------------------------------------------------------- two commands at once


def _init_at(home: str, barrier) -> None:
    from league.create import create_league
    from league.home import LeagueHome

    barrier.wait()
    create_league(LeagueHome(Path(home)))


def test_league_init_run_many_times_at_once_never_fails(tmp_path):
    """Issue 37, item 5: two `league init` on one home at once failed in 2 of 6 tries ("database is
    locked", "table agents already exists"). Six rounds of four processes starting together."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    for attempt in range(6):
        home = tmp_path / f"home{attempt}"
        barrier = ctx.Barrier(4)
        procs = [ctx.Process(target=_init_at, args=(str(home), barrier)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0, 0, 0, 0], f"attempt {attempt}"
        reg = Registry.open(home / "league.db")
        try:
            assert sorted(a.name for a in reg.agent_store.all()) == ["atba", "random", "rule", "rule-pro"]
        finally:
            reg.close()


def test_init_on_an_empty_database_file_says_created(tmp_path):
    """Issue 37, item 12: `league init` on a 0-byte league.db said "Already initialised" while it initialised it."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "league.db").touch()
    result = run("init", "--home", home)
    assert result.exit_code == 0 and "Created league" in result.output, result.output
    assert "Already initialised" in run("init", "--home", home).output
