"""`league train`: one self-play run, or (with --curriculum) a curriculum's stages, with progress bars."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from league.cli.common import ConfigOpt, HomeOpt, handles_errors, out
from league.errors import LeagueError


@handles_errors
def train_command(
    file: Annotated[Optional[Path], typer.Argument(
        help="With --curriculum: the curriculum file (default: the shipped configs/curriculum.yaml); with --league: "
             "the roles file (default: the shipped configs/league-roles.yaml).", show_default=False,
        metavar="FILE")] = None,
    stage: Annotated[Optional[str], typer.Option("--stage", help="Team size to train: 1v1, 2v2 or 3v3.  [default: 1v1]",
                                                 show_default=False)] = None,
    curriculum: Annotated[bool, typer.Option(
        "--curriculum", help="Run the curriculum's stages in order, with promotion gates; run it again to resume.")] = False,
    league: Annotated[bool, typer.Option(
        "--league", help="Train a league of roles (a main agent and exploiters) from the roles FILE; run it again "
                         "to resume every role.")] = False,
    from_: Annotated[Optional[str], typer.Option(
        "--from", help="Start a new run from this agent's weights (any stage); it becomes the first version's parent.",
        show_default=False)] = None,
    steps: Annotated[Optional[int], typer.Option("--steps", help="Agent steps to train for.", show_default=False)] = None,
    minutes: Annotated[Optional[float], typer.Option("--minutes", help="Wall-clock budget.", show_default=False)] = None,
    policy: Annotated[Optional[str], typer.Option("--policy", help="mlp or lstm.", show_default=False)] = None,
    distill: Annotated[Optional[str], typer.Option(
        "--distill", help="Copy this league member first (a community bot, or an own agent into a new network), "
                          "then train past it (training.distill; docs/distill.md).", show_default=False,
        metavar="TEACHER")] = None,
    action_space: Annotated[Optional[str], typer.Option(
        "--action-space", help="What the network speaks: table, necto or element (policy.action_space).  [default: "
                               "with --distill, the teacher's own; otherwise the config's]", show_default=False)] = None,
    config: ConfigOpt = None,
    device: Annotated[Optional[str], typer.Option("--device", help="auto, cpu or cuda.", show_default=False)] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Game worker processes.", show_default=False)] = None,
    backend: Annotated[Optional[str], typer.Option(
        "--backend", help="Where the games run and who acts in them: rollout (rollout workers on this machine, "
                          "each with its own forwards), central (game workers on this machine, every forward in the "
                          "learner), in-process (this process) or ray (rollout workers on a Ray cluster).  [default: "
                          "auto: rollout, with a CPU learner and with a GPU one]", show_default=False)] = None,
    address: Annotated[Optional[str], typer.Option(
        "--address", help="With --backend ray: a cluster's head (host:port); default a local instance on 127.0.0.1.",
        show_default=False)] = None,
    rollout_workers: Annotated[Optional[int], typer.Option(
        "--rollout-workers", help="With --backend ray: rollout workers (one core each); default one per cluster CPU.",
        show_default=False)] = None,
    name: Annotated[Optional[str], typer.Option("--name", help="Run name; versions are NAME-v1, NAME-v2, ...", show_default=False)] = None,
    resume: Annotated[Optional[str], typer.Option("--resume", help="Continue from this snapshot, optimizer included.", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed for everything random.", show_default=False)] = None,
    set_: Annotated[Optional[list[str]], typer.Option("--set", help="Override any config key: --set ppo.epochs=3.", show_default=False)] = None,
    home: HomeOpt = None,
) -> None:
    """Train a PPO (or LSTM) learner by self-play against league opponents, snapshotting into the registry.

    Ctrl-C saves a final snapshot and exits cleanly. --curriculum [FILE] runs the curriculum's stages
    (1v1 -> 2v2 -> 3v3 by default) with promotion gates; the same command resumes it after an
    interruption, and --name runs the file again under another name. --from NAME starts one stage
    from any earlier agent. --league [FILE] trains a main agent and its exploiters, taking turns by
    their shares of the time (each its own learner with --backend ray); `league roles` shows them.

    Example: league train --stage 1v1 --minutes 10 --policy mlp

    Example: league train --stage 1v1 --distill necto --minutes 60

    Example: league train --curriculum configs/curriculum.yaml --minutes 60

    Example: league train --stage 2v2 --from mlp-1v1-v12 --steps 2000000 --name mlp-2v2-from-1v1

    Example: league train --stage 1v1 --backend ray --address 10.0.0.5:6379 --minutes 60

    Example: league train --league configs/league-roles.yaml --minutes 60
    """
    from league.cli.progress import budget_bar
    from league.home import resolve_home
    from training.launch import run_one

    if resume is not None and from_ is not None:
        raise LeagueError("Give either --resume (continue a run) or --from (start a new run from an agent), not both.")
    league_home = resolve_home(home).require()
    if (address is not None or rollout_workers is not None) and backend != "ray":
        raise LeagueError("--address and --rollout-workers go with --backend ray.")
    overrides = {"policy.kind": policy, "training.device": device, "runner.workers": workers, "seed": seed,
                 "runner.backend": backend, "runner.address": address, "runner.rollout_workers": rollout_workers,
                 "training.distill.teacher": distill, "policy.action_space": action_space}
    if distill is not None and (league or curriculum):
        raise LeagueError("--distill goes with one run (league train --stage S --distill TEACHER); a curriculum "
                          "stage names its teacher with training.distill.teacher.")
    if league:
        from league.cli.roles import run_league_with_progress

        given = [flag for flag, value in (("--curriculum", curriculum or None), ("--steps", steps),
                                          ("--resume", resume), ("--from", from_), ("--stage", stage))
                 if value is not None]
        if given:
            raise LeagueError(f"{given[0]} does not go with --league: the roles file sets the stage, each role's "
                              "run and where it starts, and running it again resumes every role.")
        run_league_with_progress(league_home, file, name=name, config=config, minutes=minutes,
                                 overrides=overrides, sets=set_)
        return
    if curriculum:
        from league.cli.curriculum import run_curriculum_with_progress

        if steps is not None or resume is not None or stage is not None:
            flag = "--steps" if steps is not None else "--resume" if resume is not None else "--stage"
            raise LeagueError(f"{flag} does not go with --curriculum: the curriculum file sets each stage's team size "
                              "and budget, and running it again resumes it.")
        run_curriculum_with_progress(league_home, file, name=name, config=config, minutes=minutes,
                                     init_from=from_, overrides=overrides, sets=set_)
        return
    if file is not None:
        raise LeagueError(f"Unexpected argument {str(file)!r}: a FILE is only for --curriculum or --league "
                          "(league train --curriculum FILE, league train --league FILE).")
    result = run_one(league_home, stage, steps=steps, minutes=minutes, resume=resume, init_from=from_, name=name,
                     user_file=config, overrides=overrides, sets=set_, progress=budget_bar)
    note = " (interrupted; final snapshot saved)" if result.interrupted else ""
    out.print(f"Trained {result.run} to {result.steps:,} steps in {result.seconds:.0f} s{note}; "
              f"versions: {result.versions_said()}", highlight=False)
    split = sum(result.timing.values()) or 1.0
    out.print("Time split: " + ", ".join(f"{k} {v / split:.0%}" for k, v in result.timing.items()), highlight=False)
    if result.profile is not None and (labels := result.profile.seconds("teacher")):
        from arena.engine.cores import usable_cores

        cores = usable_cores()
        out.print(f"The teacher's labels: {labels:.0f} s in the collectors, {labels / (result.seconds * cores):.0%} of "
                  f"the run's core-seconds (wall clock x {cores} cores)", highlight=False)
    if result.champion is not None:
        out.print(champion_line(league_home, result.champion, result.run), highlight=False)


def measured_against(reg, agent) -> str:
    """What the champion `agent` was last measured against, as the champion line says it: the title round robin that
    crowned it, or a later one that kept the title with it (an SPRT promoted it during a run, then the run's round
    robin kept it), by its worst matchup there; else its latest panel test; "" when none. The newest of them."""
    from arena.crown import title_kept
    from league.profile import crowning_of

    said: list[tuple[str, str]] = []  # (when, what), the crowning first: a tie goes to it

    def title(verb: str, name: str, records) -> str:
        worst = min(records, key=lambda m: records[m].score)
        return (f"; {verb} {name} of {len(records) + 1}: its worst matchup {worst} {records[worst].score:.0%} over "
                f"{records[worst].games}")

    crowned, records, name = crowning_of(reg, agent)
    if crowned is not None and records:
        said.append((crowned.created, title("crowned by", name, records)))
    kept = None if agent.team_size is None else title_kept(reg, agent.name, agent.team_size,
                                                             crowned.tournament_id if crowned else None)
    if kept is not None:
        said.append((kept.created, title("kept the title in", kept.name, kept.records)))
    tests = reg.panel_store.of(agent.name)
    if tests:
        said.append((tests[-1].created, "; measured against " + ", ".join(
            f"{m} {r.score:.0%} over {r.games}" for m, r in tests[-1].records.items())))
    return max(said, key=lambda w: w[0])[1] if said else ""


def champion_line(home, champion: str, run: str) -> str:
    """"Champion: NAME", whether it is of this run, and what it was last measured against (the title round robin that
    crowned it, by its worst matchup, or its latest panel test); when the
    champion is not of this run, a second line names the run's best snapshot by Elo against the panel and what
    kept it from the title (strength among snapshots is not a ladder: the run's best may beat the champion yet
    lose to one member)."""
    from league.cli.common import open_league

    _, reg = open_league(home.root, readonly=True)
    try:
        said = measured_against(reg, reg.agent_store.get(champion))
        own = champion in reg.agent_store.run_versions(run)
        best = None if own else max(reg.panel_store.for_run(run), key=lambda t: t.elo, default=None)
    finally:
        reg.close()
    line = f"Champion: {champion}{' (a snapshot of this run)' if own else ''}{said}"
    if best is not None:
        low, high = best.elo_interval
        if best.passed:
            why = "it passed the panel, and the SPRT against the title holder of its day decided"
        elif best.beaten_by is not None:
            beaten = best.records[best.beaten_by]
            why = f"{best.beaten_by} beat it ({beaten.score:.0%} over {beaten.games})"
        else:
            why = f"its test was {best.verdict}"
        line += (f"\nThis run's best against the panel: {best.agent}, {best.elo:+.0f} Elo ({low:+.0f}..{high:+.0f}) "
                 f"over {len(best.records)} members; {why}")
    return line
