"""Export a league agent as a self-contained RLBot v5 bot folder (library half of `league export --rlbot`).

    manifest = write_rlbot_bot(checkpoint, tmp_dir, agent_name="mlp-1v1-v7", lineage=[...],
                               league_version="0.1.0")

`tmp_dir` is an existing, empty folder made by the caller (who renames it into place). The
folder needs no rl-league and no torch at run time:

    bot.toml, loadout.toml   RLBot v5 configuration (add bot.toml in the RLBot GUI or a match toml)
    bot.py                   an rlbot.managers.Bot calling league_runner.LeaguePolicyRunner
    league_runner.py         packets -> observation -> action, tick skip, kickoffs, LSTM state
    league_packet.py         an RLBot GamePacket as the league's raw arrays
    league_net.py            the actor (car-frame features, LSTM, MLP head) in numpy
    league_obs.py            agents/obs.py, copied verbatim: the one observation implementation
    league_actions.py        agents/actions.py, copied verbatim: the action table
    weights.safetensors      the actor's tensors (torch's names), float32
    manifest.json            what the agent is, tick skip, action table, versions, sha256 of every file
    requirements.txt, README.md

The runner's sources are kept as files in agents/rlbot_bot/ (package data, not a package:
they import the copied league_obs/league_actions by their folder names).
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import save as save_numpy
from torch import nn

from agents import actions as league_actions
from agents import obs as league_obs
from agents.checkpoint import Checkpoint
from league.agent_facts import Source, sampling_temperature
from league.config import GameConfig
from league.errors import LeagueError
from league.game_values import TICKS_PER_SECOND
from league.provenance import licence_notice

FORMAT_NAME = "rl-league-rlbot-bot"
FORMAT_VERSION = 1
TEMPLATE_DIR = Path(__file__).resolve().parent / "rlbot_bot"
TEMPLATE_FILES = ("bot.py", "league_runner.py", "league_packet.py", "league_net.py")
COPIED_MODULES = {"league_obs.py": league_obs, "league_actions.py": league_actions}
# What the runner's packet code (agents/rlbot_bot/league_packet.py) was written for.
SUPPORTED_OBS_LAYOUTS = (1,)
SUPPORTED_ACTION_TABLES = (1,)
ACTIVATIONS = ("relu", "elu", "tanh")
MANIFEST = "manifest.json"
WEIGHTS = "weights.safetensors"
AGENT_ID_PREFIX = "rl-league/"
RLBOT_REQUIREMENTS = ("rlbot==2.0.0b56", "rlbot-flatbuffers==0.19.0", "numpy>=1.24", "safetensors>=0.4")
# What a bot folder must never import: it runs without this project and without torch.
FORBIDDEN_IMPORTS = ("league", "agents", "arena", "training", "dashboard", "torch")
OCTANE_CAR_ID = 23  # the league trains Octanes only (RocketSim's default car)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _toml_str(text: str) -> str:
    """A TOML basic string (JSON's escapes are a subset of TOML's)."""
    return json.dumps(text)


# --------------------------------------------------------------------------- checks


def _check_versions(checkpoint: Checkpoint) -> None:
    meta = checkpoint.meta
    if meta.obs_layout_version not in SUPPORTED_OBS_LAYOUTS or meta.obs_layout_version != league_obs.OBS_LAYOUT_VERSION:
        raise LeagueError(f"Cannot export an agent trained for observation layout {meta.obs_layout_version}: the RLBot "
                          f"bot's packet code speaks layout {league_obs.OBS_LAYOUT_VERSION} only.")
    if (meta.action_table_version not in SUPPORTED_ACTION_TABLES
            or meta.action_table_version != league_actions.ACTION_TABLE_VERSION):
        raise LeagueError(f"Cannot export an agent trained for action table {meta.action_table_version}: the RLBot "
                          f"bot speaks action table {league_actions.ACTION_TABLE_VERSION} only.")


def tick_skip_of(training_config: dict[str, Any] | None) -> int:
    """The action repeat the agent trained with (training_config game.tick_skip; the default when absent)."""
    default = GameConfig().tick_skip
    game = (training_config or {}).get("game") if isinstance(training_config, dict) else None
    if not isinstance(game, dict) or "tick_skip" not in game:
        return default
    value = game["tick_skip"]
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= TICKS_PER_SECOND:
        raise LeagueError(f"The checkpoint's training config has game.tick_skip {value!r}; expected a whole number "
                          f"of ticks from 1 to {TICKS_PER_SECOND}.")
    return value


def _check_dest(dest: Path) -> None:
    if not dest.is_dir():
        raise LeagueError(f"Cannot write the RLBot bot into {dest}: it is not an existing folder.")
    if any(dest.iterdir()):
        raise LeagueError(f"Cannot write the RLBot bot into {dest}: the folder is not empty.")


def _check_standalone(name: str, source: str) -> None:
    """A file of the bot folder imports nothing of this project (the folder runs without it)."""
    for node in ast.walk(ast.parse(source, filename=name)):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
        for module in names:
            if module.split(".")[0] in FORBIDDEN_IMPORTS:
                raise LeagueError(f"Cannot export: {name} imports {module}, which the RLBot bot does not ship.")


# --------------------------------------------------------------------------- the network


def _linear_prefixes(prefix: str, head: nn.Sequential) -> list[str]:
    return [f"{prefix}.{i}" for i, layer in enumerate(head) if isinstance(layer, nn.Linear)]


def network_description(checkpoint: Checkpoint) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(manifest "network" section, the actor's tensors as float32 numpy arrays by torch name)."""
    net, arch = checkpoint.net, checkpoint.meta.architecture
    if arch.activation not in ACTIVATIONS:
        raise LeagueError(f"Cannot export a network with activation {arch.activation!r}; "
                          f"the RLBot bot knows {', '.join(ACTIVATIONS)}.")
    state = net.state_dict()
    actor_layers = _linear_prefixes("actor", net.actor)
    names = [f"{p}.{part}" for p in actor_layers for part in ("weight", "bias")]
    lstm = None
    if arch.kind == "lstm":
        lstm = {"prefix": "lstm", "hidden": int(arch.lstm_hidden)}
        names += [f"lstm.{t}_l0" for t in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    tensors = {name: state[name].detach().to("cpu").float().numpy().copy() for name in names}
    description = {
        "kind": arch.kind,
        "activation": arch.activation,
        "car_frame": bool(arch.car_frame),
        "prev_controls": bool(arch.prev_controls),
        "obs_dim": net.obs_dim,
        "n_actions": net.space.logits,
        "actor_layers": actor_layers,
        "lstm": lstm,
    }
    return description, tensors


# --------------------------------------------------------------------------- text files


def _bot_toml(agent_name: str, agent_id: str, description: str) -> str:
    return "\n".join([
        "#:schema https://rlbot.org/schemas/agent.json",
        "[settings]",
        f"agent_id = {_toml_str(agent_id)}",
        f"name = {_toml_str(agent_name)}",
        'loadout_file = "loadout.toml"',
        'root_dir = ""',
        "# The interpreter you ran `pip install -r requirements.txt` with; for a virtual environment in",
        '# this folder use ".\\\\venv\\\\Scripts\\\\python.exe bot.py" and "./venv/bin/python bot.py".',
        'run_command = "python bot.py"',
        'run_command_linux = "python3 bot.py"',
        "",
        "[details]",
        f"description = {_toml_str(description)}",
        'fun_fact = "Trained by self-play in RocketSim, the observation built from the packet exactly as in training."',
        'source_link = ""',
        'developer = "rl-league"',
        'language = "python"',
        'tags = ["1v1", "teamplay"]',
        "",
    ])


def _loadout_toml() -> str:
    def team(name: str, color: int, finish: int) -> list[str]:
        return [
            f"[{name}]",
            f"team_color_id = {color}",
            "custom_color_id = 0",
            f"car_id = {OCTANE_CAR_ID}  # Octane: the only body the league trains with",
            "decal_id = 0", "wheels_id = 0", "boost_id = 0", "antenna_id = 0", "hat_id = 0",
            f"paint_finish_id = {finish}", f"custom_finish_id = {finish}",
            "engine_audio_id = 0", "trails_id = 0", "goal_explosion_id = 0",
            "",
        ]
    return "\n".join(["#:schema https://rlbot.org/schemas/loadout.json", *team("blue_loadout", 29, 0),
                      *team("orange_loadout", 69, 0)])


APPROXIMATIONS = """\
The league trains in RocketSim; in the game the bot reads RLBot's GamePacket instead. The
observation is built by the league's own code (`league_obs.py`, a verbatim copy of
agents/obs.py) from arrays read out of the packet; these are the places where the packet
cannot give exactly what RocketSim gave in training, and what the bot does:

- **Rotation.** RocketSim hands the league the car's rotation matrix; the packet has pitch, yaw
  and roll. The bot rebuilds forward and up from them (RocketSim's and rlgym-compat's rotator
  convention; against RocketSim's own matrices the difference is at most about 2e-5, largest
  near pitch = +-90 degrees). The game's rotations are themselves rounded (Unreal rotator
  units, 2 pi / 65536 rad), which RocketSim's are not.
- **On ground.** RocketSim's flag means "3 or more wheels touching"; the bot uses RLBot's air
  state `OnGround`. They can disagree for a tick or two when landing, on wall transitions and
  just after a jump press.
- **Demolished cars.** The demolished flag is exact (`demolished_timeout` > 0). While a car is
  demolished RocketSim keeps reporting it where it died (or at its respawn spot, at rest); the
  bot uses whatever position and velocity the packet reports for it.
- **Boost pads.** The packet's pads (sorted by y, then x) are matched by position to RocketSim's
  order (which the league's pad block uses; orange sees them reversed, as in training); a field
  without the 34 standard soccar pads is refused. Available = the pad's `is_active`.
- **Clock and score.** The observation's clock is the match clock (`game_time_remaining`) and
  the score is the scoreboard's, as in the league's timed games (tournaments). Training
  episodes differ: each restarts its 300 s clock and a 0-0 score at every goal. In overtime the
  clock shows 0 and the overtime flag is 1.0, an input the league never sets (its games have no
  overtime); in a game of unlimited time the clock shows a full 300 s.
- **Action timing.** In RocketSim an action is applied from the tick after its observation for
  exactly `tick_skip` ticks. The bot chooses on the first packet at or after each decision
  frame (counted with `frame_num`, so skipped packets do not shift the count) and RLBot applies
  the input a tick or more later; after skipped packets an action is held a little longer.
- **Kickoffs and episodes.** A league episode starts at a kickoff (or, in training, a random
  state, which a real match never has). The bot starts one at every kickoff, the match start
  and every restart after a goal: it zeroes an LSTM's state and starts its action cycle at the
  first packet of play. During the 3-second countdown, which RocketSim does not have, it
  holds the action it will take at go (computed from a fresh state, without advancing it).
  The league's tournaments keep an LSTM's state across the goals of one game; the bot, like
  training, does not.
- **Phases.** In replays, pauses and outside a match the bot sends neutral controls.
- **Cars and ball.** Only the first ball is read. Cars fill the observation's slots in packet
  order (up to 2 team-mates and 3 opponents, as in the league, where the order is car-id
  order). The league trains Octanes on standard soccar: `loadout.toml` picks the Octane; other
  bodies, maps, game modes and mutators (game speed, gravity, boost amounts) are untested.
- **Physics.** RocketSim is a close but not perfect copy of the game's physics; nothing in the
  bot corrects for that.
"""


def _readme(manifest: dict[str, Any]) -> str:
    arch = manifest["architecture"]
    net = manifest["network"]
    if net["kind"] == "lstm":
        shape = f"an LSTM ({net['lstm']['hidden']} hidden) then an MLP head {arch['actor_sizes']}"
    else:
        shape = f"an MLP {arch['actor_sizes']}"
    lineage = " -> ".join(manifest["lineage"]) if manifest["lineage"] else "(none recorded)"
    mode = ("deterministic: it always takes the most likely action (argmax)" if manifest["deterministic"]
            else f"sampled: it draws each action from the policy's distribution at temperature "
                 f"{manifest.get('temperature', 1.0):g}, as in training")
    derived = manifest.get("derived_from") or []
    sources = [s for s in map(Source.parse, derived) if s is not None]
    notice = ("\n## Licence of the weights\n\n" + licence_notice(sources) + "\n") if sources else ""
    return f"""# {manifest['agent']} (rl-league)
{notice}
An agent of the rl-league self-play league, exported as an RLBot v5 bot.

- agent: `{manifest['agent']}` (agent id `{manifest['agent_id']}`), {manifest['steps']:,} agent steps trained
- lineage (oldest first): {lineage}
- network: {net['kind']}, {shape}, {arch['activation']} activations, car-frame input features {'on' if net['car_frame'] else 'off'}; numpy at run time, no torch
- tick skip: {manifest['tick_skip']} (a new action every {manifest['tick_skip']} physics ticks of 120 Hz, held in between)
- actions: {mode}
- observation layout version {manifest['obs_layout_version']}, action table version {manifest['action_table_version']}
- exported by rl-league {manifest['league_version']} from checkpoint sha256 `{manifest['checkpoint_sha256']}`

## Install

Python 3.11 or newer:

```bash
pip install -r requirements.txt
```

(or in a virtual environment in this folder: `python -m venv venv`, activate it, `pip install -r
requirements.txt`, and point `run_command` / `run_command_linux` in `bot.toml` at
`.\\venv\\Scripts\\python.exe bot.py` / `./venv/bin/python bot.py`).

## Run it in RLBot v5

- RLBot GUI: Add -> Load folder, pick this folder (or the file `bot.toml`); the bot appears in
  the list; put it on a team and start a match. It plays 1v1, 2v2 and 3v3, blue or orange.
- A match file, started with RLBotServer available by
  `python -c "from pathlib import Path; from rlbot.managers import MatchManager; MatchManager().start_match(Path('match.toml'))"`:

```toml
[rlbot]
launcher = "Steam"

[match]
game_mode = "Soccar"
game_map_upk = "Stadium_P"

[[cars]]
config_file = "path/to/this/folder/bot.toml"
team = 0

[[cars]]
type = "Psyonix"
skill = "AllStar"
team = 1
```

To start it by hand: `RLBOT_AGENT_ID={manifest['agent_id']} python bot.py`.

## Files

`manifest.json` records what the agent is and the sha256 of every other file here.
`league_obs.py` and `league_actions.py` are verbatim copies of the league's observation and
action code; `league_runner.py` turns packets into observations and actions and holds the
episode logic; `league_net.py` is the network in numpy; `weights.safetensors` its weights.

## What is approximated

{APPROXIMATIONS}"""


# --------------------------------------------------------------------------- the exporter


def write_rlbot_bot(checkpoint: Checkpoint, dest: Path, *, agent_name: str, lineage: list[str],
                    deterministic: bool = True, league_version: str,
                    derived_from: list[dict[str, Any]] = ()) -> dict[str, Any]:
    """Write an RLBot v5 bot folder playing `checkpoint` into the empty folder `dest`; returns the manifest.

    Refuses (LeagueError) a checkpoint whose observation layout or action table the bot's code
    does not speak, an activation it does not know, and a `dest` that is missing or not empty.
    """
    dest = Path(dest)
    _check_versions(checkpoint)
    _check_dest(dest)
    tick_skip = tick_skip_of(checkpoint.meta.training_config)
    network, tensors = network_description(checkpoint)
    agent_id = AGENT_ID_PREFIX + agent_name

    files: dict[str, bytes] = {}
    for name in TEMPLATE_FILES:
        files[name] = (TEMPLATE_DIR / name).read_bytes()
    for name, module in COPIED_MODULES.items():
        files[name] = Path(module.__file__).read_bytes()  # verbatim: the league's one implementation
    for name, data in files.items():
        _check_standalone(name, data.decode("utf-8"))
    files[WEIGHTS] = save_numpy(tensors, metadata={"format": FORMAT_NAME, "agent": agent_name,
                                                   "checkpoint_sha256": checkpoint.sha256})
    description = f"rl-league agent {agent_name} ({network['kind']}, {checkpoint.meta.steps:,} steps of self-play)"
    files["bot.toml"] = _bot_toml(agent_name, agent_id, description).encode()
    files["loadout.toml"] = _loadout_toml().encode()
    files["requirements.txt"] = ("\n".join(RLBOT_REQUIREMENTS) + "\n").encode()

    manifest: dict[str, Any] = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "agent": agent_name,
        "agent_id": agent_id,
        "lineage": list(lineage),
        "steps": int(checkpoint.meta.steps),
        "kind": checkpoint.meta.kind,
        "architecture": dataclasses.asdict(checkpoint.meta.architecture),
        "network": network,
        "obs_layout_version": league_obs.OBS_LAYOUT_VERSION,
        "action_table_version": league_actions.ACTION_TABLE_VERSION,
        "controls": list(league_actions.CONTROLS),
        "action_space": checkpoint.net.space.name,
        "head_sizes": list(checkpoint.net.space.head_sizes),
        "action_table": checkpoint.net.space.controls.tolist(),
        "tick_skip": tick_skip,
        "deterministic": bool(deterministic),
        "temperature": sampling_temperature(checkpoint.meta.training_config, "The checkpoint"),  # what sampled play divides logits by
        "league_version": league_version,
        "checkpoint_sha256": checkpoint.sha256,
        "derived_from": list(derived_from),  # community bots whose weights these derive from (league.provenance)
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    files["README.md"] = _readme(manifest).encode()
    manifest["files"] = {name: _sha256(data) for name, data in sorted(files.items())}
    files[MANIFEST] = (json.dumps(manifest, indent=2) + "\n").encode()
    for name, data in files.items():
        (dest / name).write_bytes(data)
    return manifest
