"""`league replay play FILE --viewer V`: a recorded replay sent to an external 3D viewer at the speed of its clock."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from league.cli.common import handles_errors, out
from league.cli.watch import SpeedOpt, ViewerOpt, ViewerPortOpt, open_viewer_checked
from league.errors import LeagueError

app = typer.Typer(help="Replay files: send one to an external viewer.", no_args_is_help=True)


@app.command("play")
@handles_errors
def play_command(
    file: Annotated[Path, typer.Argument(help="A replay file (<league home>/replays/.../*.replay, or live/*.replay).")],
    viewer: ViewerOpt = None,
    viewer_port: ViewerPortOpt = None,
    speed: SpeedOpt = 1.0,
    start: Annotated[float, typer.Option("--from", help="Start this many seconds into the game.")] = 0.0,
) -> None:
    """Send a replay to RocketSimVis or RLViser (already running), frame by frame at the speed of its clock.

    The dashboard's Replays page plays replays in the browser; this is for the 3D viewers that
    RLGym users already have.

    Example: league replay play league-home/replays/tournament-3/00012-rule-vs-atba.replay --viewer rocketsimvis

    Example: league replay play game.replay --viewer rlviser --speed 2 --from 60
    """
    import math

    from arena.replay import read_replay, read_replay_header
    from arena.viewers import check_viewer_name
    from arena.pacing import check_speed, send_replay

    if viewer is None:
        raise LeagueError("Name a viewer: --viewer rocketsimvis or --viewer rlviser (the dashboard's Replays page "
                          "plays replays in the browser).")
    check_viewer_name(viewer)
    check_speed(speed)
    if not (math.isfinite(start) and start >= 0):
        raise LeagueError(f"--from must be a number of seconds from 0, not {start}.")
    # The header (a few KB) answers --from and the viewer's tick skip, so a mistake or a viewer not
    # running is said before a replay of up to an hour at tick skip 1 is decoded.
    header = read_replay_header(file)
    if start >= header.seconds():  # compared as seconds: start / seconds_per_step may be inf
        raise LeagueError(f"--from {start:g} is past the replay's end ({round(header.seconds(), 2):g} s).")
    sink = open_viewer_checked(viewer, viewer_port, header.meta["tick_skip"])
    try:
        replay = read_replay(file)
        step = min(int(start / replay.seconds_per_step()), replay.steps - 1)
        sent = send_replay(replay, sink, speed, step)
    except KeyboardInterrupt:
        raise LeagueError("Interrupted.") from None
    finally:
        sink.close()
    score = replay.meta["score"]
    out.print(f"Sent {sent} frames of {replay.meta['blue']} vs {replay.meta['orange']} ({score[0]}-{score[1]}) to "
              f"{sink.name}.", highlight=False, soft_wrap=True)
