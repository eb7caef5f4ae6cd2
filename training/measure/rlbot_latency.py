"""Latency of an exported RLBot bot: `python -m training.measure.rlbot_latency [--kind mlp|lstm] [--packets N]`.

Exports a freshly initialised agent of the default architecture (league.config.PolicyConfig,
MLP [256, 256, 256] or LSTM) with agents.rlbot_export into a temporary folder, loads the
folder's own LeaguePolicyRunner (what bot.py's get_output calls) and times, on one core:

  get_output   runner.act on a packet that starts a new action (packet -> observation ->
               numpy forward -> ControllerState): the bot's worst case, once every tick_skip ticks
  held         runner.act on a packet between decisions (the other tick_skip - 1 packets)
  numpy fwd    the folder's numpy actor alone, one observation
  torch fwd    the league's torch actor on the same observation (inference_mode, one thread):
               the reference the numpy forward replaces

Packets are synthetic (random positions, rotations, velocities and pads for `--team-size` cars
a side): timing does not depend on what they show. The issue's target: get_output p99 under
2 ms for the default MLP on one core. Machines here are noisy; compare figures within one run.
"""

from __future__ import annotations

import os

# One thread everywhere, before numpy and torch start their pools: the figure is per core.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from agents.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from agents.networks import build_network  # noqa: E402
from agents.rlbot_export import write_rlbot_bot  # noqa: E402
from league.config import PolicyConfig  # noqa: E402

BOT_MODULES = ("league_obs", "league_actions", "league_net", "league_packet", "league_runner")
WARMUP_CALLS = 200
US = 1e6


@dataclass(frozen=True)
class Timing:
    p50_us: float
    p99_us: float
    mean_us: float

    @classmethod
    def of(cls, seconds: list[float]) -> Timing:
        ordered = sorted(seconds)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        return cls(statistics.median(ordered) * US, p99 * US, statistics.fmean(ordered) * US)


@dataclass(frozen=True)
class RlbotLatencyReport:
    kind: str
    team_size: int
    packets: int
    tick_skip: int
    folder_bytes: int
    weights_bytes: int
    get_output: Timing
    held: Timing
    numpy_forward: Timing
    torch_forward: Timing

    @property
    def numpy_vs_torch(self) -> float:
        """Median numpy forward over median torch forward (below 1: numpy is faster)."""
        return self.numpy_forward.p50_us / self.torch_forward.p50_us


def _pin_one_core() -> None:
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    except (AttributeError, OSError):  # not Linux: the thread limits above still hold
        pass


def _load_runner(folder: Path):
    for name in BOT_MODULES:
        sys.modules.pop(name, None)
    sys.path.insert(0, str(folder))
    try:
        import league_packet
        import league_runner
    finally:
        sys.path.remove(str(folder))
        for name in BOT_MODULES:
            sys.modules.pop(name, None)
    return league_runner.LeaguePolicyRunner(folder), league_packet


def _field_info(flat, league_packet):
    return flat.FieldInfo(boost_pads=[flat.BoostPad(location=flat.Vector3(*p))
                                      for p in league_packet.LEAGUE_PAD_POSITIONS.tolist()])


def _packets(flat, n: int, team_size: int, rng: np.random.Generator, tick_skip: int) -> list:
    def v3(scale) -> flat.Vector3:
        return flat.Vector3(*rng.uniform(-1, 1, 3) * scale)

    def physics(pos_scale) -> flat.Physics:
        rotation = flat.Rotator(rng.uniform(-1.5, 1.5), rng.uniform(-3.1, 3.1), rng.uniform(-3.1, 3.1))
        return flat.Physics(location=v3(pos_scale), rotation=rotation, velocity=v3(2000.0), angular_velocity=v3(5.0))

    packets = []
    for k in range(n):
        players = [flat.PlayerInfo(physics=physics(np.array([4000.0, 5000.0, 1000.0])), team=t,
                                   air_state=flat.AirState(int(rng.integers(0, 5))), boost=float(rng.uniform(0, 100)),
                                   demolished_timeout=-1.0)
                   for t in (0, 1) for _ in range(team_size)]
        pads = [flat.BoostPadState(bool(rng.random() < 0.7)) for _ in range(34)]
        packets.append(flat.GamePacket(
            players=players, boost_pads=pads, balls=[flat.BallInfo(physics=physics(np.array([4000.0, 5000.0, 1800.0])))],
            match_info=flat.MatchInfo(game_time_remaining=200.0, match_phase=flat.MatchPhase.Active,
                                      frame_num=k * tick_skip),
            teams=[flat.TeamInfo(0, 1), flat.TeamInfo(1, 0)]))
    return packets


def _time(fn, args_list: list) -> list[float]:
    out = []
    clock = time.perf_counter
    for args in args_list:
        start = clock()
        fn(*args)
        out.append(clock() - start)
    return out


def measure(kind: str = "mlp", packets: int = 2000, team_size: int = 3, seed: int = 0) -> RlbotLatencyReport:
    """Export a default `kind` agent and time its bot (see the module docstring)."""
    from rlbot import flat  # the bot's own dependency; imported here so the module loads without it

    _pin_one_core()
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="rlbot-latency-") as tmp:
        tmp = Path(tmp)
        net = build_network(PolicyConfig(kind=kind)).eval()
        save_checkpoint(tmp / "agent", net, steps=0)
        ckpt = load_checkpoint(tmp / "agent")
        folder = tmp / "bot"
        folder.mkdir()
        manifest = write_rlbot_bot(ckpt, folder, agent_name=f"latency-{kind}", lineage=[], league_version="measure")
        folder_bytes = sum(p.stat().st_size for p in folder.iterdir())
        weights_bytes = (folder / "weights.safetensors").stat().st_size
        runner, league_packet = _load_runner(folder)
        field = _field_info(flat, league_packet)
        tick_skip = runner.tick_skip
        stream = _packets(flat, WARMUP_CALLS + packets, team_size, rng, tick_skip)

        def get_output(packet):
            return runner.act(packet, field, 0)

        _time(get_output, [(p,) for p in stream[:WARMUP_CALLS]])
        decide = _time(get_output, [(p,) for p in stream[WARMUP_CALLS:]])
        # Between decisions: the same packet again one tick later holds the action.
        held_packets = []
        for p in stream[WARMUP_CALLS:]:
            info = p.match_info
            held_packets.append(flat.GamePacket(players=p.players, boost_pads=p.boost_pads, balls=p.balls, teams=p.teams,
                                                match_info=flat.MatchInfo(game_time_remaining=info.game_time_remaining,
                                                                          match_phase=info.match_phase,
                                                                          frame_num=info.frame_num + 1)))
        held = []
        for p, q in zip(stream[WARMUP_CALLS:], held_packets):
            runner.act(p, field, 0)
            held += _time(get_output, [(q,)])

        observations = np.stack([runner.observation(p, field, 0) for p in stream[WARMUP_CALLS:]])
        actor = runner.actor
        state = actor.initial_state(1)
        _time(lambda o: actor.logits(o[None], state), [(o,) for o in observations[:WARMUP_CALLS]])
        numpy_forward = _time(lambda o: actor.logits(o[None], state), [(o,) for o in observations])

        torch_state = ckpt.net.initial_state(1)
        starts = torch.zeros(1)

        def torch_forward(o):
            with torch.inference_mode():
                x = torch.from_numpy(o[None])
                if kind == "lstm":
                    return ckpt.net.step(x, torch_state, starts)[0].argmax(-1)
                return ckpt.net.logits(x).argmax(-1)

        _time(torch_forward, [(o,) for o in observations[:WARMUP_CALLS]])
        torch_times = _time(torch_forward, [(o,) for o in observations])
    return RlbotLatencyReport(
        kind=kind, team_size=team_size, packets=packets, tick_skip=manifest["tick_skip"],
        folder_bytes=folder_bytes, weights_bytes=weights_bytes, get_output=Timing.of(decide), held=Timing.of(held),
        numpy_forward=Timing.of(numpy_forward), torch_forward=Timing.of(torch_times),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--kind", choices=("mlp", "lstm"), default="mlp", help="network kind (default mlp)")
    parser.add_argument("--packets", type=int, default=2000, help="timed packets (default 2000)")
    parser.add_argument("--team-size", type=int, choices=(1, 2, 3), default=3, help="cars a side (default 3)")
    args = parser.parse_args()
    r = measure(args.kind, args.packets, args.team_size)
    print(f"RLBot bot latency: {r.kind}, {r.team_size}v{r.team_size}, {r.packets} packets, one core, tick skip {r.tick_skip}")
    for label, t in (("get_output (new action)", r.get_output), ("get_output (held)", r.held),
                     ("numpy forward", r.numpy_forward), ("torch forward (reference)", r.torch_forward)):
        print(f"  {label:26s} p50 {t.p50_us:8.1f} us   p99 {t.p99_us:8.1f} us   mean {t.mean_us:8.1f} us")
    print(f"  numpy / torch forward (p50): {r.numpy_vs_torch:.2f}x")
    print(f"  folder: {r.folder_bytes / 1024:.0f} KiB ({r.weights_bytes / 1024:.0f} KiB of weights)")


if __name__ == "__main__":
    main()
