"""`league watch A B`: a game between two members played at the speed of its clock, shown as it plays
(the dashboard's Live page, and RocketSimVis or RLViser when asked for)."""

from __future__ import annotations

import secrets
from typing import Annotated, Optional

import typer

from league.cli.common import ConfigOpt, HomeOpt, handles_errors, out
from league.errors import LeagueError

ViewerOpt = Annotated[Optional[str], typer.Option(
    "--viewer", help="Also send the game to an external 3D viewer, already running: rocketsimvis (JSON over UDP to "
                     "127.0.0.1:9273) or rlviser (through the optional package rlviser-py).", show_default=False)]
# Read as text and checked by arena.viewers.check_viewer_port: -1, 65536 or 1e20 is then one sentence.
ViewerPortOpt = Annotated[Optional[str], typer.Option(
    "--viewer-port", metavar="PORT", help="RocketSimVis' UDP port, 1 to 65535 (default 9273).", show_default=False)]
SpeedOpt = Annotated[float, typer.Option(
    "--speed", help="Times real time: 1 plays at the speed of the game clock, 4 four times faster, 0 as fast as "
                    "the game plays.")]


def open_viewer_checked(viewer: str | None, port: str | None, tick_skip: int):
    """The viewer asked for, checked to be running (one sentence otherwise), or None."""
    from arena.viewers import check_viewer_port, open_viewer

    check_viewer_port(port)
    if viewer is None:
        if port is not None:
            raise LeagueError("--viewer-port needs --viewer rocketsimvis.")
        return None
    return open_viewer(viewer, port=port, tick_skip=tick_skip)


@handles_errors
def watch_command(
    a: Annotated[str, typer.Argument(help="Blue: an agent, or in 2v2 and 3v3 a mixed team, members joined by '+'.")],
    b: Annotated[str, typer.Argument(help="Orange: an agent, or a mixed team.")],
    stage: Annotated[str, typer.Option("--stage", help="1v1, 2v2 or 3v3.")] = "1v1",
    viewer: ViewerOpt = None,
    viewer_port: ViewerPortOpt = None,
    speed: SpeedOpt = 1.0,
    game_seconds: Annotated[Optional[float], typer.Option("--game-seconds", help="Game clock (default from config: 300).", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="The game's seed (default: a new one, printed, so the game can be seen again).", show_default=False)] = None,
    sampled: Annotated[bool, typer.Option("--sampled", help="Network agents draw each action from their policy instead of playing the most likely one.")] = False,
    config: ConfigOpt = None,
    home: HomeOpt = None,
) -> None:
    """Play one game of A (blue) against B (orange) at the speed of the game clock, and show it as it plays.

    The dashboard's Live page (league dashboard) shows it while it plays: the game so far is
    rewritten under the league home (live/) twice a second. With --viewer it also goes, frame by
    frame, to RocketSimVis or RLViser, which must already be running. The game is not recorded
    in the league and moves no rating; any member may play, retired ones too.

    Example: league watch ppo-1v1-v13 necto

    Example: league watch "ppo-2v2-v4+necto" "rule+atba" --stage 2v2 --viewer rocketsimvis

    Example: league watch rule rule-pro --speed 4 --game-seconds 60 --seed 7
    """
    from agents.loading import load_policy
    from arena.engine.game import GameSpec
    from arena.live_folder import live_file_name, live_folder, prune_live
    from arena.pacing import check_speed
    from arena.watch import watch_game, watch_sides
    from arena.viewers import check_viewer_name, check_viewer_port
    from league.cli.common import open_league
    from league.config import load_config
    from league.teams import member_names

    check_speed(speed)
    check_viewer_port(viewer_port)
    if viewer is not None:
        check_viewer_name(viewer)
    league_home, registry = open_league(home, config, readonly=True)
    live_dir = live_folder(league_home.live)  # a folder of the home's own, before anything is written
    cfg = load_config(stage=stage, user_file=config, home_file=league_home.config_path,
                      overrides={"game.game_seconds": game_seconds, "seed": seed})  # both checked here
    seed = cfg.seed if seed is not None else secrets.randbelow(2**31)
    blue, orange = watch_sides(registry, a, b, cfg.game.team_size)
    spec = GameSpec.from_config(cfg.game, mode="timed")
    sink = open_viewer_checked(viewer, viewer_port, spec.tick_skip)  # before the policies load: refused at once
    policies = {n: load_policy(registry.agent_store.get(n), home_root=league_home.root)
                for n in member_names((blue, orange))}
    prune_live(live_dir)
    live = live_dir / live_file_name(blue, orange)
    shown = f" and in {sink.name}" if sink else ""
    out.print(f"{blue} (blue) vs {orange} (orange), {spec.team_size}v{spec.team_size}, {spec.game_seconds:g} s at "
              f"{'full speed' if speed == 0 else f'{speed:g}x'}, seed {seed}: on the dashboard's Live page{shown}.",
              highlight=False, soft_wrap=True)

    def goal(step: int, team: int, score: tuple[int, int]) -> None:
        minutes, seconds = divmod(int(step * spec.step_seconds), 60)
        out.print(f"{minutes}:{seconds:02d} goal for {'blue' if team == 0 else 'orange'}: {score[0]}-{score[1]}",
                  highlight=False)

    try:
        result = watch_game(spec, policies, blue, orange, seed, live_path=live, viewer=sink, speed=speed,
                            deterministic=not sampled, on_goal=goal)
    except KeyboardInterrupt:
        raise LeagueError(f"Interrupted; the game so far is in {live}.") from None
    finally:
        if sink is not None:
            sink.close()
    out.print(f"Final score {result.score[0]}-{result.score[1]} after {result.length_seconds:.0f} s; the replay is "
              f"{live} (league replay play {live} --viewer rocketsimvis sends it again).", highlight=False,
              soft_wrap=True)
