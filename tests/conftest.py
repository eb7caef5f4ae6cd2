"""Shared fixtures: real league homes in temporary folders."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from league.home import LeagueHome
from league.registry import GameRecord, Registry

# Property tests draw the same examples on every run: a test of the default suite must not fail by chance (an
# SPRT property drawn at random once did). HYPOTHESIS_PROFILE=explore draws new ones, to look for counterexamples.
hypothesis_settings.register_profile("deterministic", derandomize=True)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

# The modules of the classes the suite's worker pools host (game workers, rollout workers), loaded
# once by the fork server: whichever pool a test run opens first, both kinds start without them.
WORKER_MODULES = ("arena.game_pool", "training.rollout_worker")


def pytest_sessionstart(session) -> None:
    from arena.engine.procs import worker_context

    worker_context(WORKER_MODULES)  # the list the fork server starts with, when a test first needs it


def copy_home(template: LeagueHome, dest: Path) -> LeagueHome:
    """A private copy of a league home (database, checkpoints, runs, replays) for one test to change."""
    shutil.copytree(template.root, dest, symlinks=True)
    return LeagueHome(dest)


@pytest.fixture(scope="session")
def blank_template(tmp_path_factory) -> LeagueHome:
    """One new, empty league home made once per session (what `league init` makes); never changed."""
    h = LeagueHome(tmp_path_factory.mktemp("blank") / "league")
    h.create_dirs()
    Registry.create(h.db_path).close()
    return h


@pytest.fixture
def home(blank_template, tmp_path) -> LeagueHome:
    """A new, empty league home of this test's own (a copy of the session's blank one)."""
    return copy_home(blank_template, tmp_path / "league")


# The tiny training run the self-play tests share: 1 rollout worker with 4 arenas (one process to start:
# a second one cost each run about 2 s), collected between updates as with 2 workers on 2 cores, a 32x32 network.
TINY_TRAINING = ["runner.workers=1", "runner.envs_per_worker=4", "runner.pipeline=never", "ppo.steps_per_env=32", "ppo.minibatch_size=128",
                 "policy.actor_sizes=[32]", "policy.critic_sizes=[32]", "training.snapshot_every_steps=256",
                 "training.eval_every_snapshots=1", "training.eval_games=2", "training.eval_game_seconds=5"]
TRAINED_STEPS = 512


@pytest.fixture(scope="session")
def trained_template(tmp_path_factory):
    """One league home with one trained run (`mlp-1v1`, TRAINED_STEPS agent steps of TINY_TRAINING,
    its snapshots evaluated), trained once per session: (home, the run's TrainResult). Never
    changed by a test: take `trained_home` for a copy."""
    from league.config import load_config
    from training.selfplay import SelfPlayTrainer

    h = LeagueHome(tmp_path_factory.mktemp("trained") / "league")
    h.create_dirs()
    Registry.create(h.db_path).close()
    # Idle cars reset after 4 s (not 10): training games end within this short run, so it has results against opponents.
    cfg = load_config(stage="1v1", sets=[*TINY_TRAINING, "game.no_touch_timeout_seconds=4",
                                         f"training.steps={TRAINED_STEPS}"])
    reg = Registry.open(h.db_path, cfg.ratings)
    try:
        result = SelfPlayTrainer(cfg, h, reg).run()
    finally:
        reg.close()
    return h, result


@pytest.fixture
def trained_home(trained_template, tmp_path):
    """A copy of the shared trained home for this test, and the run's TrainResult."""
    template, result = trained_template
    return copy_home(template, tmp_path / "league"), result


@pytest.fixture(scope="session")
def fixture_league_template(tmp_path_factory):
    """The dashboard tests' fixture league (dashboard_fixture.build_fixture_league), built once per
    session; never changed: take a copy (dashboard_fixture.copy_fixture_league)."""
    from dashboard_fixture import build_fixture_league

    return build_fixture_league(tmp_path_factory.mktemp("dash-template") / "league")


@pytest.fixture
def scripted_stage(home):
    """A 1v1 stage with two scripted stage agents: `rulebot` (the rule bot) and `randbot` (random actions)."""
    reg = Registry.open(home.db_path)
    reg.agent_store.add("rulebot", "rule", 1)
    reg.agent_store.add("randbot", "random", 1)
    yield home, reg
    reg.close()


@pytest.fixture
def registry(home):
    reg = Registry.open(home.db_path)
    yield reg
    reg.close()


def play(reg: Registry, blue: str, orange: str, blue_goals: int, orange_goals: int, team_size: int = 1, **kw) -> int:
    """Record one game between two registered agents."""
    return reg.game_store.record(GameRecord(blue=blue, orange=orange, team_size=team_size, seed=kw.pop("seed", 0),
                                      blue_goals=blue_goals, orange_goals=orange_goals,
                                      length_seconds=kw.pop("length_seconds", 300.0), **kw))


def round_robin(reg, entrants: list[str], results: dict[tuple[str, str], tuple[int, int, int]],
                config: dict | None = None, name: str = "t") -> int:
    """A finished tournament of `entrants` whose games are `results`: (a, b) -> (a's wins, draws, losses)."""
    tid = reg.tournament_store.create(name, 1, 0, 2, 2 * len(results), entrants, config or {})
    index = 0
    for (a, b), (wins, draws, losses) in results.items():
        for goals in [(1, 0)] * wins + [(0, 0)] * draws + [(0, 1)] * losses:
            play(reg, a, b, *goals, tournament_id=tid, schedule_index=index, origin="tournament")
            index += 1
    reg.tournament_store.set_status(tid, "finished")
    return tid


def config_from_dict(data: dict, source: str = "stored config"):
    """Rebuild a Config from its `to_dict()` form (as a snapshot keeps it); old names of choices, which
    older snapshots hold, are read without a note."""
    from league.config import Config
    from league.config_tree import build, validate

    validate(Config, data, source, notes=False)
    return build(Config, data)


def recompute_ratings(store, team_size: int) -> dict[str, tuple[float, float, float]]:
    """(elo, mu, sigma) per agent name from replaying every recorded game of `store` (a GameStore) in
    order with its own rating step: the stored ratings must equal these (no update lost or doubled)."""
    from league import ratings as rating_math
    from league.teams import members

    cfg = store.ratings_cfg
    initial = (cfg.elo.initial, cfg.trueskill.mu, cfg.trueskill.sigma)
    state: dict[str, tuple[float, float, float]] = {}
    for g in store.games(team_size):
        if g.blue == g.orange:
            continue
        score = rating_math.score_from_goals(g.blue_goals, g.orange_goals)
        blue, orange = members(g.blue), members(g.orange)
        after = store._rate_sides([state.get(n, initial) for n in blue], [state.get(n, initial) for n in orange],
                                  score, team_size if g.mixed else None)
        state.update(zip(blue + orange, after[0] + after[1]))
    return state


def promotions_of(store, name: str) -> list:
    """Every promotion (and SPRT test) of agent `name` in `store` (a PromotionStore), oldest first."""
    return [p for p in store.all() if p.agent == name]


def promoted_by_sprt(store, team_size: int | None = None) -> list:
    """The promotions an SPRT decided (H1 accepted), of one team size or of all."""
    from league.stores.promotions import TESTED_METHODS

    return [p for p in store.all() if p.promoted and p.method in TESTED_METHODS
            and (team_size is None or p.team_size == team_size)]


def interruptible(cmd: list[str], **kw) -> subprocess.Popen:
    """A process a test stops with SIGINT, as Ctrl-C would: started with SIGINT at its default, whatever this
    test run inherited. A shell's background job (`pytest ... &` in a script, a CI runner) ignores SIGINT, its
    children inherit that and Python then never raises KeyboardInterrupt: the slow pass of 2026-12-02, so run,
    lost three tests to a `league train` and a tournament that went on for 120 s past their Ctrl-C."""
    return subprocess.Popen(cmd, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kw)


@contextmanager
def full_disk_at(folder: Path, size_bytes: int) -> Iterator[None]:
    """A real, tiny filesystem (tmpfs) mounted at `folder` for the block: writes past `size_bytes`
    fail with ENOSPC, as on a full disk. Skips the test where mounting is not permitted."""
    folder.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_bytes}", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def rlviser_port_lock() -> Iterator[None]:
    """One test at a time, across the suite's processes, binds RLViser's fixed ports or runs a process named
    rlviser (what the RLViser tests look for): the others wait for it rather than find the port taken and skip,
    or meet its process."""
    import fcntl
    import tempfile

    with open(Path(tempfile.gettempdir()) / "rl-league-tests-rlviser.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
