"""The exported RLBot v5 bot acts exactly as the league's policy does, proven without the game.

Real league games (arena.engine.vector.VecGame on RocketSim: kickoffs, randomized states with aerial
balls, demolitions, boost pads taken, 1v1/2v2/3v3, both sides) are shown to the exported bot as
RLBot `GamePacket`s built from RocketSim's per-object state (the way the game would report it:
Euler angles, air state, demolition timer, boost pads sorted by y then x, the match clock),
passed through the flatbuffer wire format. The bot's modules are imported from the exported
folder itself. On every step:

  (a) the bot's observation equals the league's build_obs row (float tolerance: the bot
      rebuilds forward/up from Euler angles), and
  (b) in deterministic mode the controls it returns are ACTION_TABLE[the league policy's
      argmax action] (agents.nn_policy.NetworkPolicy) for the same state, for an MLP and an
      LSTM agent, the LSTM's state carried across steps and reset where the league's games
      start an episode (shown to the bot as a kickoff).

A second game is fed every physics tick's packet (with some packets dropped): the bot's
controls change only on its decision frames, every `tick_skip` ticks, and equal the league's
action there; the bot drives the cars itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import RocketSim as rsim
import torch

flat = pytest.importorskip("rlbot.flat", reason="rlbot (RLBot v5, Python 3.11+) is not installed")
rlbot_config = pytest.importorskip("rlbot.config")

from agents.actions import ACTION_TABLE  # noqa: E402
from agents.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from agents.features import CarFrame  # noqa: E402
from agents.networks import build_network  # noqa: E402
from agents.nn_policy import NetworkPolicy  # noqa: E402
from agents.obs import C_FWD, LAYOUT, build_obs  # noqa: E402
from agents.rlbot_export import tick_skip_of, write_rlbot_bot  # noqa: E402
from arena.engine.game import GameSpec  # noqa: E402
from arena.engine.vector import VecGame  # noqa: E402
from league.config import PolicyConfig  # noqa: E402
from league.errors import LeagueError  # noqa: E402

BOT_MODULES = ("league_obs", "league_actions", "league_net", "league_packet", "league_runner", "bot")
TICK_SKIP = 8
HEAD_SCALE = 300.0  # the policy head starts near-uniform (gain 0.01): scaled, its argmax means something
TIE = 1e-4  # logits closer than this are a tie within float rounding, not a mismatch
OBS_TOL = 1e-4  # forward/up rebuilt from Euler angles: about 2e-5 at worst near pitch +-90 degrees
STEPS = 110


# --------------------------------------------------------------------------- exported bots


def league_checkpoint(folder: Path, kind: str, *, tick_skip: int = TICK_SKIP, seed: int = 0):
    """A default-architecture network, randomly initialised with a decisive head, saved and loaded back."""
    torch.manual_seed(seed)
    net = build_network(PolicyConfig(kind=kind))
    with torch.no_grad():
        net.actor[-1].weight.mul_(HEAD_SCALE)
    save_checkpoint(folder / kind, net, steps=4321,
                    training_config={"stage": "1v1", "game": {"tick_skip": tick_skip}})
    return load_checkpoint(folder / kind)


def export(checkpoint, folder: Path, **kw) -> tuple[Path, dict]:
    folder.mkdir(parents=True)
    kw.setdefault("deterministic", True)
    manifest = write_rlbot_bot(checkpoint, folder, agent_name=f"test-{checkpoint.meta.kind}",
                               lineage=["test-v1", "test-v2"], league_version="0.1.0", **kw)
    return folder, manifest


def load_bot(folder: Path) -> dict:
    """The bot folder's own modules, imported from it (never a cached copy from another folder)."""
    for name in BOT_MODULES:
        sys.modules.pop(name, None)
    environ = dict(os.environ)  # bot.py sets thread limits for its own process: keep ours as they were
    sys.path.insert(0, str(folder))
    try:
        modules = {name: __import__(name) for name in BOT_MODULES}
    finally:
        sys.path.remove(str(folder))
        for name in BOT_MODULES:
            sys.modules.pop(name, None)
        os.environ.clear()
        os.environ.update(environ)
    for module in modules.values():
        assert Path(module.__file__).parent == folder, module.__file__
    return modules


@pytest.fixture(scope="module")
def bots(tmp_path_factory):
    """{kind: (folder, manifest, checkpoint, bot modules)} for an MLP and an LSTM agent."""
    root = tmp_path_factory.mktemp("rlbot")
    out = {}
    for kind in ("mlp", "lstm"):
        ckpt = league_checkpoint(root, kind)
        folder, manifest = export(ckpt, root / f"{kind}-bot")
        out[kind] = (folder, manifest, ckpt, load_bot(folder))
    return out


# --------------------------------------------------------------------------- RocketSim -> RLBot packets


def vec(v) -> flat.Vector3:
    return flat.Vector3(*(float(x) for x in v.as_tuple()))


def pad_packet_order(arena) -> np.ndarray:
    """RLBot lists boost pads sorted by y, then x: the RocketSim pad index of each packet pad."""
    positions = np.array([pad.get_pos().as_numpy() for pad in arena.get_boost_pads()])
    return np.lexsort((positions[:, 0], positions[:, 1]))


def field_info_of(arena, rng) -> flat.FieldInfo:
    pads = arena.get_boost_pads()
    out = []
    for k in pad_packet_order(arena).tolist():
        x, y, z = pads[k].get_pos().as_numpy() + rng.uniform(-3, 3, 3)  # the game's own survey of the pads
        out.append(flat.BoostPad(location=flat.Vector3(x, y, z), is_full_boost=pads[k].is_big))
    return flat.FieldInfo.unpack(flat.FieldInfo(boost_pads=out).pack())


def air_state(s) -> flat.AirState:
    if s.is_on_ground:
        return flat.AirState.OnGround
    if s.is_jumping:
        return flat.AirState.Jumping
    if s.is_flipping:
        return flat.AirState.Dodging
    return flat.AirState.InAir


def physics(s) -> flat.Physics:
    angle = s.rot_mat.as_angle()  # RocketSim's own Euler angles, as the game reports a rotator
    return flat.Physics(location=vec(s.pos), rotation=flat.Rotator(angle.pitch, angle.yaw, angle.roll),
                        velocity=vec(s.vel), angular_velocity=vec(s.ang_vel))


def packet_of(arena, cars, *, frame: int, phase, seconds_left: float, score=(0, 0)) -> flat.GamePacket:
    """What RLBot would send for this RocketSim arena (read object by object), through the wire format."""
    players = []
    for car in cars:
        s = car.get_state()
        players.append(flat.PlayerInfo(
            physics=physics(s), air_state=air_state(s), is_bot=True, name=f"car{car.id}", team=int(car.team),
            demolished_timeout=float(s.demo_respawn_timer) if s.is_demoed else -1.0,
            dodge_timeout=-1.0, boost=float(s.boost), player_id=int(car.id), has_jumped=bool(s.has_jumped),
            has_double_jumped=bool(s.has_double_jumped), has_dodged=bool(s.has_flipped),
            is_supersonic=bool(s.is_supersonic),
        ))
    pads = arena.get_boost_pads()
    boost_pads = []
    for k in pad_packet_order(arena).tolist():
        state = pads[k].get_state()
        boost_pads.append(flat.BoostPadState(is_active=bool(state.is_active), timer=0.0 if state.is_active else 1.0))
    ball = arena.ball.get_state()
    packet = flat.GamePacket(
        players=players, boost_pads=boost_pads,
        balls=[flat.BallInfo(physics=physics(ball), shape=flat.SphereShape(91.25))],
        match_info=flat.MatchInfo(seconds_elapsed=frame / 120.0, game_time_remaining=float(seconds_left),
                                  match_phase=phase, world_gravity_z=-650.0, game_speed=1.0, frame_num=int(frame)),
        teams=[flat.TeamInfo(0, int(score[0])), flat.TeamInfo(1, int(score[1]))],
    )
    return flat.GamePacket.unpack(packet.pack())


def controls_tuple(c) -> tuple:
    return (c.throttle, c.steer, c.pitch, c.yaw, c.roll, float(c.jump), float(c.boost), float(c.handbrake))


def table_tuple(action: int) -> tuple:
    return tuple(float(v) for v in ACTION_TABLE[action])


def car_controls(c) -> rsim.CarControls:
    out = rsim.CarControls()
    out.throttle, out.steer, out.pitch, out.yaw, out.roll = c.throttle, c.steer, c.pitch, c.yaw, c.roll
    out.jump, out.boost, out.handbrake = c.jump, c.boost, c.handbrake
    return out


# --------------------------------------------------------------------------- the files


def test_folder_holds_what_the_manifest_says(bots):
    folder, manifest, ckpt, _ = bots["lstm"]
    written = json.loads((folder / "manifest.json").read_text())
    assert written == manifest
    import hashlib

    for name, sha in manifest["files"].items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == sha, name
    assert sorted(p.name for p in folder.iterdir()) == sorted([*manifest["files"], "manifest.json"])
    assert manifest["checkpoint_sha256"] == ckpt.sha256
    assert manifest["tick_skip"] == TICK_SKIP and manifest["deterministic"] is True
    assert manifest["kind"] == "lstm" and manifest["steps"] == 4321 and manifest["lineage"] == ["test-v1", "test-v2"]
    assert np.array_equal(np.array(manifest["action_table"], dtype=np.float32), ACTION_TABLE)
    for name, module in (("league_obs.py", "agents/obs.py"), ("league_actions.py", "agents/actions.py")):
        assert (folder / name).read_bytes() == (Path(__file__).parents[1] / module).read_bytes()
    requirements = (folder / "requirements.txt").read_text().split()
    assert "rlbot==2.0.0b56" in requirements and not any(r.startswith("torch") for r in requirements)
    readme = (folder / "README.md").read_text()
    for needle in ("pip install -r requirements.txt", "What is approximated", "tick skip: 8", "test-v1 -> test-v2"):
        assert needle in readme


def test_bot_and_loadout_tomls_parse_with_rlbot(bots):
    folder, manifest, _, _ = bots["mlp"]
    for team in (0, 1):
        player = rlbot_config.load_player_config(folder / "bot.toml", team)
        bot = player.variety
        assert bot.agent_id == manifest["agent_id"] == "rl-league/test-mlp"
        assert bot.name == "test-mlp" and "bot.py" in bot.run_command
        assert bot.loadout is not None and bot.loadout.car_id == 23
        assert rlbot_config.load_player_loadout(folder / "loadout.toml", team).car_id == 23


def test_bot_runs_without_the_league_or_torch(bots):
    """In a fresh interpreter, the folder's bot imports and plays importing no rl-league package and no torch."""
    folder = bots["lstm"][0]
    script = f"""
import sys
sys.path.insert(0, {str(folder)!r})
import bot, league_packet, league_runner
from rlbot import flat
runner = league_runner.LeaguePolicyRunner()
pads = [flat.BoostPad(location=flat.Vector3(*p)) for p in league_packet.LEAGUE_PAD_POSITIONS.tolist()]
field = flat.FieldInfo(boost_pads=pads)
players = [flat.PlayerInfo(team=t, demolished_timeout=-1.0, boost=33.0) for t in (0, 1)]
packet = flat.GamePacket(players=players, balls=[flat.BallInfo()], boost_pads=[flat.BoostPadState(True)] * 34,
                         match_info=flat.MatchInfo(match_phase=flat.MatchPhase.Active, frame_num=10))
assert isinstance(runner.act(packet, field, 1), flat.ControllerState)
assert bot.LeagueBot.__mro__[1].__name__ == "Bot"
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("league", "agents", "arena", "training", "torch"))
print("imported:", bad)
sys.exit(1 if bad else 0)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=folder, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_bot_class_plays_through_its_runner(bots):
    folder, manifest, _, modules = bots["mlp"]
    rng = np.random.default_rng(0)
    with VecGame(GameSpec(team_size=1), workers=1, envs_per_worker=1, placement="in-process", seed=3) as games:
        games.reset(seed=3)
        worker = games.in_process_workers[0]
        arena, cars = worker.arenas[0], worker.cars[0]
        field = field_info_of(arena, rng)
        bot = modules["bot"].LeagueBot(manifest["agent_id"])
        bot.field_info, bot.index, bot.team = field, 1, 1
        bot.initialize()
        packet = packet_of(arena, cars, frame=100, phase=flat.MatchPhase.Kickoff, seconds_left=300.0)
        runner = modules["league_runner"].LeaguePolicyRunner(folder)
        assert controls_tuple(bot.get_output(packet)) == controls_tuple(runner.act(packet, field, 1))


def test_exporter_refusals(bots, tmp_path):
    import dataclasses

    _, _, ckpt, _ = bots["mlp"]
    for field in ("obs_layout_version", "action_table_version"):
        old = dataclasses.replace(ckpt, meta=dataclasses.replace(ckpt.meta, **{field: 2}))
        (tmp_path / field).mkdir()
        with pytest.raises(LeagueError, match="layout 2|action table 2"):
            write_rlbot_bot(old, tmp_path / field, agent_name="x", lineage=[], league_version="0")
    full = tmp_path / "full"
    full.mkdir()
    (full / "something").write_text("x")
    with pytest.raises(LeagueError, match="not empty"):
        write_rlbot_bot(ckpt, full, agent_name="x", lineage=[], league_version="0")
    with pytest.raises(LeagueError, match="not an existing folder"):
        write_rlbot_bot(ckpt, tmp_path / "missing", agent_name="x", lineage=[], league_version="0")
    assert tick_skip_of(None) == 8 and tick_skip_of({"game": {"team_size": 2}}) == 8
    assert tick_skip_of({"game": {"tick_skip": 4}}) == 4
    for bad in (0, 121, 8.0, True, "8"):
        with pytest.raises(LeagueError, match="tick_skip"):
            tick_skip_of({"game": {"tick_skip": bad}})


def test_runner_refuses_weights_of_another_layout(bots, tmp_path):
    folder, manifest, _, modules = bots["mlp"]
    copy = tmp_path / "copy"
    copy.mkdir()
    for p in folder.iterdir():
        (copy / p.name).write_bytes(p.read_bytes())
    (copy / "manifest.json").write_text(json.dumps({**manifest, "obs_layout_version": 2}))
    with pytest.raises(ValueError, match="layout"):
        modules["league_runner"].LeaguePolicyRunner(copy)


def test_field_without_standard_pads_is_refused(bots):
    packet_mod = bots["mlp"][3]["league_packet"]
    with pytest.raises(ValueError, match="34 boost pads"):
        packet_mod.pad_order(flat.FieldInfo(boost_pads=[flat.BoostPad()] * 10))
    shifted = [flat.BoostPad(location=flat.Vector3(x + 500, y, z)) for x, y, z in packet_mod.LEAGUE_PAD_POSITIONS.tolist()]
    with pytest.raises(ValueError, match="not where"):
        packet_mod.pad_order(flat.FieldInfo(boost_pads=shifted))


def test_pad_table_is_rocketsims(bots):
    packet_mod = bots["mlp"][3]["league_packet"]
    with VecGame(GameSpec(team_size=1), workers=1, envs_per_worker=1, placement="in-process") as games:
        arena = games.in_process_workers[0].arenas[0]
        positions = np.array([pad.get_pos().as_numpy() for pad in arena.get_boost_pads()])
    np.testing.assert_array_equal(positions, packet_mod.LEAGUE_PAD_POSITIONS)


# --------------------------------------------------------------------------- the network in numpy


def test_numpy_actor_equals_torch(bots):
    """CarFrame and the actor's logits in numpy equal torch's on real observations (and LSTM steps)."""
    rng = np.random.default_rng(1)
    with VecGame(GameSpec(team_size=3, random_start_share=1.0), workers=1, envs_per_worker=4,
                 placement="in-process", seed=5) as games:
        obs = games.reset(seed=5).copy()
        more, *_ = games.step(rng.integers(0, 90, games.num_agents))
        obs = np.concatenate([obs, more])
    net_mod = bots["mlp"][3]["league_net"]
    with torch.inference_mode():
        torch_features = CarFrame()(torch.from_numpy(obs)).numpy()
    np.testing.assert_allclose(net_mod.car_frame(obs), torch_features, rtol=1e-5, atol=1e-5)
    for kind in ("mlp", "lstm"):
        _, _, ckpt, modules = bots[kind]
        from safetensors.numpy import load_file

        folder = bots[kind][0]
        manifest = json.loads((folder / "manifest.json").read_text())
        actor = modules["league_net"].NumpyActor(load_file(str(folder / "weights.safetensors")), manifest["network"])
        half = len(obs) // 2
        with torch.inference_mode():
            x = torch.from_numpy(obs)
            if kind == "mlp":
                expected = ckpt.net.logits(x).numpy()
                got = actor.logits(obs)[0]
            else:  # two steps, the state carried
                state = ckpt.net.initial_state(half)
                starts = torch.zeros(half)
                first, _, state = ckpt.net.step(x[:half], state, starts)
                second, _, _ = ckpt.net.step(x[half:], state, starts)
                expected = np.concatenate([first.numpy(), second.numpy()])
                a, s = actor.logits(obs[:half])
                b, _ = actor.logits(obs[half:], s)
                got = np.concatenate([a, b])
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
        assert (got.argmax(-1) == expected.argmax(-1)).mean() > 0.99


# --------------------------------------------------------------------------- parity over real games


def play_parity(bot, team_size: int, seed: int, steps: int = STEPS) -> dict:
    """Play league games (VecGame, training mode) and compare the bot with the league every step.

    Returns per-side counts and what the games covered. The league's own policy chooses the
    actions that are played (with some random ones mixed in, so the games visit more states).
    """
    folder, manifest, ckpt, modules = bot
    Runner = modules["league_runner"].LeaguePolicyRunner
    policy = NetworkPolicy(ckpt.net)
    rng = np.random.default_rng(seed)
    spec = GameSpec(team_size=team_size, tick_skip=manifest["tick_skip"], random_start_share=0.5,
                    no_touch_timeout_seconds=3.0, episode_timeout_seconds=5.0)
    counts = {side: Counter() for side in ("blue", "orange")}
    seen = Counter()
    worst_obs = 0.0
    with VecGame(spec, workers=1, envs_per_worker=2, placement="in-process", seed=seed) as games:
        obs = games.reset(seed=seed).copy()
        starts = games.info.episode_start.copy()
        worker = games.in_process_workers[0]
        fields = [field_info_of(arena, rng) for arena in worker.arenas]
        runners = [[Runner(folder) for _ in range(games.agents_per_env)] for _ in worker.arenas]
        state = policy.initial_state(games.num_agents)
        for step in range(steps):
            before = state
            actions, state = policy.act(obs, state, starts, deterministic=True)
            logits = None
            for e, (arena, cars) in enumerate(zip(worker.arenas, worker.cars)):
                start = bool(starts[e * games.agents_per_env])
                packet = packet_of(arena, cars, frame=arena.tick_count, seconds_left=float(games.info.seconds_left[e]),
                                   phase=flat.MatchPhase.Kickoff if start else flat.MatchPhase.Active,
                                   score=games.info.score[e])
                seen["kickoffs"] += start and abs(packet.balls[0].physics.location.x) < 1 and abs(packet.balls[0].physics.location.y) < 1
                seen["aerial ball"] += packet.balls[0].physics.location.z > 500
                seen["pads taken"] += sum(not p.is_active for p in packet.boost_pads) > 0
                seen["demolished"] += sum(p.demolished_timeout > 0 for p in packet.players)
                seen["car in the air"] += sum(int(p.air_state) != 0 for p in packet.players)
                for c in range(games.agents_per_env):
                    row = e * games.agents_per_env + c
                    runner = runners[e][c]
                    decisions = runner.decisions
                    controls = runner.act(packet, fields[e], c)
                    assert runner.decisions == decisions + 1, "the bot must decide on every tick-skip boundary"
                    diff = np.abs(runner.last_obs - obs[row])
                    worst_obs = max(worst_obs, float(diff.max()))
                    assert diff.max() < OBS_TOL, f"obs differ at {np.flatnonzero(diff >= OBS_TOL).tolist()}"
                    side = counts["orange" if games.teams[row] == 1 else "blue"]
                    side["steps"] += 1
                    seen[f"action {int(actions[row])}"] = 1
                    if controls_tuple(controls) != table_tuple(int(actions[row])):
                        if logits is None:  # the league's logits, to tell a float-rounding tie from a mismatch
                            with torch.inference_mode():
                                x = torch.from_numpy(obs)
                                logits = (ckpt.net.step(x, before, torch.from_numpy(starts.astype(np.float32)))[0]
                                          if policy.recurrent else ckpt.net.logits(x)).numpy()
                        chosen = [a for a in range(len(ACTION_TABLE)) if table_tuple(a) == controls_tuple(controls)]
                        gap = logits[row, actions[row]] - max(logits[row, a] for a in chosen)
                        side["ties" if gap <= TIE else "mismatches"] += 1
            played = np.where(rng.random(games.num_agents) < 0.25, rng.integers(0, 90, games.num_agents), actions)
            if step % 20 == 7:  # a demolition now and then, as in tests/test_obs_equivalence.py
                victim = worker.cars[rng.integers(len(worker.cars))][rng.integers(games.agents_per_env)]
                if not victim.get_state().is_demoed:
                    victim.demolish()
            obs, _, _, _, info = games.step(played)
            obs = obs.copy()
            starts = info.episode_start.copy()
            seen["episode starts"] += int(starts.sum() // games.agents_per_env)
    return {"counts": counts, "seen": seen, "worst_obs": worst_obs}


@pytest.mark.parametrize("kind", ["mlp", pytest.param("lstm", marks=pytest.mark.slow)])  # lstm: 10 s, slow set
def test_bot_equals_league_policy_over_real_games(bots, kind):
    report = []
    totals = Counter()
    for team_size in (1, 2, 3):
        result = play_parity(bots[kind], team_size, seed=10 + team_size)
        for side, c in result["counts"].items():
            report.append(f"{kind} {team_size}v{team_size} {side:6s}: {c['steps']:4d} steps compared, "
                          f"{c['mismatches']} mismatches, {c['ties']} float ties")
            totals.update(c)
        seen = result["seen"]
        distinct = sum(1 for k in seen if k.startswith("action "))
        totals.update({f"seen {k}": v for k, v in seen.items() if not k.startswith("action ")})
        totals["distinct actions"] = max(totals["distinct actions"], distinct)
        covered = {k: v for k, v in seen.items() if not k.startswith("action ")}
        report.append(f"  worst obs difference {result['worst_obs']:.2e}; {distinct} distinct actions; covered {covered}")
    print("\n".join(report))
    assert totals["mismatches"] == 0
    assert totals["ties"] <= 0.002 * totals["steps"]
    assert totals["distinct actions"] >= 10  # the policy's choice is not a constant
    for what in ("kickoffs", "aerial ball", "pads taken", "demolished", "car in the air", "episode starts"):
        assert totals[f"seen {what}"] > 0, f"the games never showed {what}"


@pytest.mark.parametrize("kind", ["mlp", "lstm"])
def test_every_tick_packets_repeat_actions_for_tick_skip(bots, kind):
    """Every tick's packet (a quarter dropped, as a busy bot skips them): the controls change only on
    decision frames, every tick_skip ticks, where they equal the league policy's action; the bot's
    controls drive the cars. A kickoff countdown comes first (frames pass, cars frozen)."""
    folder, manifest, ckpt, modules = bots[kind]
    tick_skip = manifest["tick_skip"]
    policy = NetworkPolicy(ckpt.net)
    rng = np.random.default_rng(7)
    spec = GameSpec(team_size=2, tick_skip=tick_skip, random_start_share=0.0)
    with VecGame(spec, workers=1, envs_per_worker=1, placement="in-process", seed=2) as games:
        games.reset(seed=2)
        worker = games.in_process_workers[0]
        arena, cars = worker.arenas[0], worker.cars[0]
        field = field_info_of(arena, rng)
        n = len(cars)
        runners = [modules["league_runner"].LeaguePolicyRunner(folder) for _ in range(n)]
        teams = games.teams[None, :n]
        state = policy.initial_state(n)

        def league_actions(elapsed_ticks: int, first: bool):
            arrays = worker.read_arrays()
            obs = build_obs(arrays.ball, arrays.cars, teams, arrays.pads, np.zeros((1, 2), np.int64),
                            np.array([spec.clock_seconds - elapsed_ticks / 120.0], np.float32), np.zeros(1, bool))
            return policy.act(obs, state, np.full(n, first), deterministic=True)

        frame = 5000
        # The countdown: frames advance, nothing moves; the bot holds the action it will take at go.
        at_go, _ = league_actions(0, True)
        for _ in range(30):
            packet = packet_of(arena, cars, frame=frame, phase=flat.MatchPhase.Countdown, seconds_left=spec.clock_seconds)
            for c, runner in enumerate(runners):
                assert controls_tuple(runner.act(packet, field, c)) == table_tuple(int(at_go[c]))
                assert runner.decisions == 0
            frame += 1
        held = [None] * n
        last_decision = None
        decisions = mismatches = delivered = 0
        for tick in range(400):
            phase = flat.MatchPhase.Kickoff if tick < 60 else flat.MatchPhase.Active
            if tick == 0 or rng.random() > 0.25:
                delivered += 1
                packet = packet_of(arena, cars, frame=frame, phase=phase, seconds_left=spec.clock_seconds - tick / 120.0)
                before = [r.decisions for r in runners]
                out = [runner.act(packet, field, c) for c, runner in enumerate(runners)]
                decided = [r.decisions > b for r, b in zip(runners, before)]
                assert len(set(decided)) == 1  # every car's bot keeps the same clock
                if decided[0]:
                    assert last_decision is None or frame >= last_decision + tick_skip
                    last_decision = frame
                    decisions += 1
                    actions, state = league_actions(tick, tick == 0)
                    for c in range(n):
                        mismatches += controls_tuple(out[c]) != table_tuple(int(actions[c]))
                        held[c] = out[c]
                        cars[c].set_controls(car_controls(out[c]))
                else:
                    assert last_decision is not None and frame < last_decision + tick_skip
                    for c in range(n):
                        assert controls_tuple(out[c]) == controls_tuple(held[c])
            arena.step(1)
            frame += 1
    print(f"{kind}: {delivered} of 400 tick packets delivered, {decisions} decisions (every >= {tick_skip} ticks), "
          f"{mismatches} mismatches")
    assert mismatches == 0
    assert 400 / tick_skip * 0.75 < decisions <= 400 / tick_skip + 1


def test_episode_boundaries_reset_the_lstm(bots):
    """A kickoff after play, and a new match (frame counter restarting), zero the LSTM state; Kickoff -> Active does not."""
    folder, _, _, modules = bots["lstm"]
    runner = modules["league_runner"].LeaguePolicyRunner(folder)
    rng = np.random.default_rng(0)
    with VecGame(GameSpec(team_size=1), workers=1, envs_per_worker=1, placement="in-process", seed=1) as games:
        games.reset(seed=1)
        worker = games.in_process_workers[0]
        arena, cars = worker.arenas[0], worker.cars[0]
        field = field_info_of(arena, rng)

        def act(frame, phase):
            runner.act(packet_of(arena, cars, frame=frame, phase=phase, seconds_left=200.0), field, 0)
            return np.abs(runner.state[0]).sum()

        assert act(100, flat.MatchPhase.Kickoff) > 0
        assert act(108, flat.MatchPhase.Active) > 0
        kept = runner.state[0].copy()
        runner.act(packet_of(arena, cars, frame=110, phase=flat.MatchPhase.Active, seconds_left=200.0), field, 0)
        assert np.array_equal(runner.state[0], kept)  # between decisions nothing moves
        assert act(116, flat.MatchPhase.GoalScored) > 0
        act(200, flat.MatchPhase.Replay)
        assert act(300, flat.MatchPhase.Countdown) == 0  # a kickoff restart: fresh state, held at go
        first = act(400, flat.MatchPhase.Kickoff)
        assert first > 0 and runner.decisions > 0
        fresh = modules["league_runner"].LeaguePolicyRunner(folder)
        fresh.act(packet_of(arena, cars, frame=400, phase=flat.MatchPhase.Kickoff, seconds_left=200.0), field, 0)
        np.testing.assert_array_equal(fresh.state[0], runner.state[0])  # as if the episode began there
        act(408, flat.MatchPhase.Active)
        act(8, flat.MatchPhase.Active)  # a new match: the frame counter went back
        np.testing.assert_array_equal(fresh.state[0], runner.state[0])


def test_sampled_export_samples(bots, tmp_path):
    _, _, ckpt, _ = bots["mlp"]
    folder, manifest = export(ckpt, tmp_path / "sampled", deterministic=False)
    assert manifest["deterministic"] is False and "sampled" in (folder / "README.md").read_text()
    modules = load_bot(folder)
    runner = modules["league_runner"].LeaguePolicyRunner(folder, seed=0)
    assert runner.deterministic is False
    with VecGame(GameSpec(team_size=1), workers=1, envs_per_worker=1, placement="in-process", seed=1) as games:
        games.reset(seed=1)
        worker = games.in_process_workers[0]
        arena, cars = worker.arenas[0], worker.cars[0]
        field = field_info_of(arena, np.random.default_rng(0))
        chosen = set()
        for k in range(40):
            runner.reset()
            out = runner.act(packet_of(arena, cars, frame=k, phase=flat.MatchPhase.Active, seconds_left=300.0), field, 0)
            chosen.add(controls_tuple(out))
    assert len(chosen) > 1 and chosen <= {table_tuple(a) for a in range(len(ACTION_TABLE))}


def test_orange_observation_is_mirrored(bots):
    """A packet's orange car sees the field rotated 180 degrees: its forward is the blue frame's negated in x, y."""
    _, _, _, modules = bots["mlp"]
    runner = modules["league_runner"].LeaguePolicyRunner(bots["mlp"][0])
    with VecGame(GameSpec(team_size=1, random_start_share=1.0), workers=1, envs_per_worker=1,
                 placement="in-process", seed=4) as games:
        obs = games.reset(seed=4)
        worker = games.in_process_workers[0]
        arena, cars = worker.arenas[0], worker.cars[0]
        packet = packet_of(arena, cars, frame=0, phase=flat.MatchPhase.Active, seconds_left=300.0)
        field = field_info_of(arena, np.random.default_rng(0))
        blue, orange = runner.observation(packet, field, 0), runner.observation(packet, field, 1)
    self_fwd = slice(LAYOUT["self"].start + C_FWD.start, LAYOUT["self"].start + C_FWD.stop)
    opp_fwd = slice(LAYOUT["opp0"].start + C_FWD.start, LAYOUT["opp0"].start + C_FWD.stop)
    np.testing.assert_allclose(orange[self_fwd], blue[opp_fwd] * np.array([-1, -1, 1]), atol=1e-6)
    np.testing.assert_allclose(orange, obs[1], atol=OBS_TOL)


def test_a_student_with_heads_and_previous_controls_plays_the_same_in_the_bot(tmp_path):
    """A network speaking Necto's heads and reading its own previous controls (a distilled student):
    over a run of real observations, the exported runner sends exactly the league policy's controls,
    each step feeding back what it sent (zeros again after an episode starts)."""
    torch.manual_seed(3)
    net = build_network(PolicyConfig(kind="mlp", action_space="necto", prev_controls=True))
    with torch.no_grad():
        net.actor[-1].weight.mul_(HEAD_SCALE)
    save_checkpoint(tmp_path / "student", net, steps=10, training_config={"stage": "1v1", "game": {"tick_skip": 8}})
    ckpt = load_checkpoint(tmp_path / "student")
    folder, manifest = export(ckpt, tmp_path / "student-bot")
    assert manifest["action_space"] == "necto" and manifest["head_sizes"] == [3, 3, 2, 2, 2]
    assert manifest["network"]["prev_controls"] and manifest["network"]["obs_dim"] == 204
    runner = load_bot(folder)["league_runner"].LeaguePolicyRunner(folder)
    policy = NetworkPolicy(ckpt.net)
    state = policy.initial_state(1)
    rng = np.random.default_rng(4)
    with VecGame(GameSpec(team_size=1, random_start_share=1.0), workers=1, envs_per_worker=1,
                 placement="in-process", seed=4) as games:
        obs = games.reset(seed=4).copy()
        sent = set()
        for step in range(60):
            start = np.array([step == 30])  # an episode starts mid-way: both forget what they sent
            if start[0]:
                runner.reset()
            ours, state = policy.act(obs[:1], state, start, deterministic=True)
            theirs = runner._table[runner._choose(obs[0], commit=True)]
            assert tuple(float(v) for v in ours[0]) == theirs, step
            sent.add(theirs)
            obs, *_ = games.step(rng.integers(0, 90, games.num_agents))
            obs = obs.copy()
    assert len(sent) > 3  # the choice is not a constant


def test_a_sampled_export_draws_at_the_temperature_the_agent_trained_at(tmp_path):
    """A distilled student trained at ppo.temperature 0.5: its sampled bot draws from softmax(logits / 0.5), as
    it played in training, so it picks the most likely action more often than at 1."""
    torch.manual_seed(5)
    net = build_network(PolicyConfig(kind="mlp", action_space="necto"))
    with torch.no_grad():
        net.actor[-1].weight.mul_(100.0)  # logits of about 1: neither uniform nor one-hot
    save_checkpoint(tmp_path / "student", net, steps=10,
                    training_config={"stage": "1v1", "game": {"tick_skip": 8}, "ppo": {"temperature": 0.5}})
    ckpt = load_checkpoint(tmp_path / "student")
    folder, manifest = export(ckpt, tmp_path / "student-bot", deterministic=False)
    assert manifest["temperature"] == 0.5 and "temperature 0.5" in (folder / "README.md").read_text()
    module = load_bot(folder)["league_runner"]
    obs = np.random.default_rng(6).standard_normal(ckpt.net.obs_dim).astype(np.float32)
    greedy = module.LeaguePolicyRunner(folder, deterministic=True)._choose(obs, commit=False)
    share = {}
    for temperature in (1.0, 0.5):
        runner = module.LeaguePolicyRunner(folder, seed=0)
        runner.temperature = temperature
        share[temperature] = np.mean([runner._choose(obs, commit=False) == greedy for _ in range(400)])
    assert share[0.5] > share[1.0] + 0.05, share
    assert module.LeaguePolicyRunner(folder).temperature == 0.5
