"""One typed config tree, loaded from YAML files and overridden by flags.

Load order (later wins): dataclass defaults, configs/base.yaml, configs/league.yaml,
configs/rewards.yaml, configs/stages/<stage>.yaml, a user file (--config), then command-line overrides.
Every layer is validated on its own before it is merged, so an unknown key, a wrong type
or an out-of-range value is reported with the file (or flag) it came from.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from league.config_tree import (
    build,
    clip,
    merge,
    param,
    parse_yaml,
    read_yaml,
    section,
    show,
    validate,
)
from league.errors import ConfigError, LeagueError
from league.game_values import TICKS_PER_SECOND
from league.sprt_params import SprtParams

STAGES = ("1v1", "2v2", "3v3")


def team_size_of(stage: str) -> int:
    """The cars per team of a stage name ('2v2' -> 2); an unknown stage is a ConfigError."""
    if stage not in STAGES:
        raise ConfigError(f"Unknown stage {show(stage)}; expected one of {', '.join(STAGES)}.")
    return int(stage[0])


def stage_of(team_size: int) -> str:
    """The stage name of a team size (2 -> '2v2')."""
    return f"{team_size}v{team_size}"


def openings_text(jitter: float) -> str:
    """How a contest's games open (game.opening_jitter), as the CLI's headers and the dashboard say it."""
    return f"openings ±{jitter:g} uu" if jitter else "standard kickoffs"


# Integer bounds. A seed is 32 bits, the range every random generator accepts (numpy's legacy one
# included); seeds derived from it add small offsets. numpy, torch and SQLite INTEGER are 64-bit.
SEED_MAX = 2**32 - 1
STEPS_MAX = 10**12  # agent-step budgets: months at 50k steps/s, far beyond any run
WIDTH_MAX = 65_536  # hidden-layer widths
THREADS_MAX = 1024
# Float bounds: every number in the tree has a range a real user could want (docs/threat-model.md), so
# no setting can overflow the math it feeds (10**(diff/scale), TrueSkill's Gaussians, Adam's steps).
RATING_MAX = 10_000.0  # initial and anchor ratings (Elo and TrueSkill): far beyond any league's spread
TS_SCALE_MIN, TS_SCALE_MAX = 0.001, 10_000.0  # TrueSkill's sigma and beta
SECONDS_MAX = 3600.0  # a game's or an episode's clock: an hour
# uu each car's kickoff spot may move when a timed game opens (game.opening_jitter; arena.engine.mutators):
# two greedy agents otherwise play one fixed line from each of the five spots.
OPENING_JITTER = 100.0
OPENING_JITTER_MAX = 500.0
GAMES_MAX = 10_000  # games of one evaluation or one match (a tournament's bound per pairing)
MINUTES_MAX = 525_600.0  # a wall-clock budget: a year
REWARD_WEIGHT_MAX = 1000.0  # a reward term's weight, either sign
COEF_MAX = 100.0  # a PPO loss or kickstart weight
WEIGHT_RANGE = {"min": -REWARD_WEIGHT_MAX, "max": REWARD_WEIGHT_MAX}

KEY_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")  # a dotted --set key: ppo.epochs


# --------------------------------------------------------------------------- the tree


@dataclass
class EloConfig:
    initial: float = param(1500.0, "Elo of a new agent.", min=-RATING_MAX, max=RATING_MAX)
    k_factor: float = param(32.0, "Elo K-factor: the largest change one game can make.", min=0, max=400)
    scale: float = param(400.0, "Elo points for 10:1 odds.", min=1, max=RATING_MAX)


@dataclass
class TrueSkillConfig:
    mu: float = param(25.0, "Initial TrueSkill mean.", min=-RATING_MAX, max=RATING_MAX)
    sigma: float = param(25.0 / 3, "Initial TrueSkill standard deviation.", min=TS_SCALE_MIN, max=TS_SCALE_MAX)
    beta: float = param(25.0 / 6, "Performance noise: skill difference for ~76% win chance.", min=TS_SCALE_MIN,
                        max=TS_SCALE_MAX)
    tau: float = param(25.0 / 300, "Dynamics factor added to sigma before each game.", min=0, max=TS_SCALE_MAX)
    # Above 0: with a draw impossible, TrueSkill's update of a drawn game can fail outright.
    draw_probability: float = param(0.10, "Prior probability of a draw between equal teams.", min=0.001, max=0.999)


@dataclass
class MleConfig:
    anchor_agent: str = param("rule", "Agent whose maximum-likelihood rating is pinned.")
    anchor_rating: float = param(1500.0, "Rating the anchor agent is pinned to.", min=-RATING_MAX, max=RATING_MAX)
    prior_draws: float = param(1.0, "Virtual draws against the anchor that keep unbeaten agents finite.", min=0,
                               max=GAMES_MAX)


@dataclass
class RatingsConfig:
    elo: EloConfig = section(EloConfig, "Incremental Elo.")
    trueskill: TrueSkillConfig = section(TrueSkillConfig, "TrueSkill (team-aware, draw-aware).")
    mle: MleConfig = section(MleConfig, "Whole-history Bradley-Terry fit.")


@dataclass
class GameConfig:
    team_size: int = param(1, "Cars per team.", min=1, max=3)
    tick_skip: int = param(8, "Physics ticks (120 Hz) each action is repeated for: the action repeat.", min=1,
                           max=TICKS_PER_SECOND)
    game_seconds: float = param(300.0, "Game clock of a timed game (tournaments).", min=1, max=3600)
    no_touch_timeout_seconds: float = param(10.0, "Training episodes end when nobody touched the ball this long.",
                                            min=1, max=SECONDS_MAX)
    episode_timeout_seconds: float = param(300.0, "Training episodes end after this much game time.", min=1,
                                           max=SECONDS_MAX)
    random_start_share: float = param(0.5, "Share of training episodes that start from a randomized state.", min=0, max=1)
    opening_jitter: float = param(
        OPENING_JITTER, "Timed games (matches, tournaments, evaluation): uu each car's kickoff spot may move in x and y "
                        "when the game opens, so each game opens its own line. 0: the five standard spots, where two "
                        "agents that play their most likely action replay one fixed line from each (a match of 200 "
                        "games then measures ten lines). Training's kickoffs: game.kickoff_jitter.",
        min=0, max=OPENING_JITTER_MAX)
    kickoff_jitter: float = param(
        0.0, "Training: uu each car's spot may move in x and y at every kickoff of a training episode (its start and "
             "after each goal), so the learner meets kickoffs near the standard spots rather than five fixed lines.",
        min=0, max=OPENING_JITTER_MAX)
    goal_ends_episode: bool = param(False, "Training: a goal ends the episode (true), or play restarts with a kickoff "
                                           "and the episode goes on, as in a timed game (false: a goal then never "
                                           "costs the scorer the rest of its episode's rewards).")


# runner.backend's old names (the only table of them: `league bench train --backends` reads it too); they work
# until the next release. Where work runs is a placement (arena.engine.placement), a word of its own.
BACKEND_RENAMED = {"processes": "rollout", "multiprocessing": "central", "serial": "in-process"}


@dataclass
class RunnerConfig:
    workers: int = param(0, "Game worker processes; 0 picks one per core.", min=0, max=256)
    envs_per_worker: int = param(
        0, "RocketSim arenas stepped by each worker; 0: auto (32 per game worker, arena.engine.vector.DEFAULT_ENVS_PER_WORKER; "
           "256 cars per rollout worker, training.rollout_worker: 128 arenas in 1v1).",
        min=0, max=4096)
    backend: Literal["auto", "rollout", "central", "in-process", "ray"] = param(
        "auto", "Where training's games run and who acts in them. rollout: rollout worker processes on this "
                "machine, each stepping its own arenas and running every policy's forward itself; central: game "
                "worker processes that only step physics, every forward in the learner's process (one batch, e.g. on "
                "the GPU); in-process: games and forwards in the learner's process (debugging, tiny runs); ray: "
                "rollout workers as Ray actors on a cluster (league train --backend ray). auto: rollout (with a GPU "
                "learner, one worker per core but one, pinned, left to the learner).",
        renamed=BACKEND_RENAMED)
    pipeline: Literal["auto", "always", "never"] = param(
        "auto", "Collect the next rollout while the learner updates (a policy lag of one update). auto: on with a "
                "GPU learner, on Ray, or with more cores than game workers.")
    rollout_workers: int = param(0, "Ray rollout workers (actors, one core each); 0: one per CPU of the cluster, "
                                    "less one for the learner.", min=0, max=4096)
    address: str = param("", "Ray cluster to join (host:port of a head node started with `ray start --head`); "
                             "empty: a local Ray instance on 127.0.0.1.")


@dataclass
class PolicyConfig:
    kind: Literal["mlp", "lstm"] = param("mlp", "Network: feed-forward MLP or recurrent LSTM actor-critic.")
    actor_sizes: list[int] = param([256, 256, 256], "Hidden layer widths of the actor.", min=1, max=WIDTH_MAX)
    critic_sizes: list[int] = param([256, 256, 256], "Hidden layer widths of the critic.", min=1, max=WIDTH_MAX)
    activation: Literal["relu", "elu", "tanh"] = param("relu", "Hidden-layer activation.")
    lstm_hidden: int = param(256, "LSTM hidden size (lstm only).", min=1, max=WIDTH_MAX)
    car_frame: bool = param(True, "Append the ball, the car's motion and the goals rotated into the car's frame "
                                   "to the network's input (agents/features.py).")
    prev_controls: bool = param(False, "Also read the agent's own previous controls (8 floats after the "
                                       "observation, zeros when an episode starts), kept by the policy itself: what "
                                       "Necto and Element read, so a student of theirs can tell a held jump from a new "
                                       "one (league train --distill turns it on).")
    action_space: Literal["table", "necto", "element"] = param(
        "table", "What the actor speaks (agents/action_spaces.py): the 90-row action table, or factorised heads in "
                 "a community bot's own terms (necto: 5 heads; element: 8), which a student distilled from that bot "
                 "needs to say what it says.")


@dataclass
class PpoConfig:
    learning_rate: float = param(5e-4, "Adam learning rate at the start of training.", min=1e-8, max=1.0)
    lr_schedule: Literal["constant", "linear"] = param(
        "linear", "Learning-rate schedule: constant, or linear to 0 over the run's budget (its steps or its "
                    "--minutes, whichever is further spent).")
    gamma: float = param(0.995, "Discount factor.", min=0, max=1)
    gae_lambda: float = param(0.95, "GAE lambda.", min=0, max=1)
    clip_coef: float = param(0.2, "PPO policy clipping range.", min=0, max=10)
    clip_value: bool = param(False, "Clip the value loss around the rollout's values as well.")
    ent_coef: float = param(0.001, "Entropy bonus weight.", min=0, max=COEF_MAX)
    vf_coef: float = param(0.5, "Value loss weight.", min=0, max=COEF_MAX)
    max_grad_norm: float = param(0.5, "Gradient-norm clipping threshold.", min=0, max=1000)
    normalize_advantages: bool = param(True, "Normalize advantages per minibatch.")
    normalize_returns: bool = param(True, "Divide rewards by the running std of the discounted return.")
    epochs: int = param(2, "Passes over each rollout.", min=1, max=1000)
    minibatch_size: int = param(2048, "Agent steps per minibatch (LSTM: rounded to whole sequences).", min=1,
                                max=1 << 24)
    steps_per_env: int = param(128, "Decision steps each env slot collects per rollout.", min=1, max=65_536)
    sequence_length: int = param(16, "Truncated-BPTT sequence length for the LSTM learner.", min=1, max=4096)
    temperature: float = param(
        1.0, "The policy trained and sampled in training games is softmax(logits / temperature); the guide term and "
             "argmax play see the logits as they are. Below 1 PPO improves a sharper policy, nearer the argmax that "
             "league games play: for a distilled student, whose whole distribution copies a teacher that plays "
             "argmax (docs/distill.md).", min=0.05, max=10)
    target_kl: float = param(0.0, "Stop the epoch loop early above this approximate KL (0: never).", min=0,
                             max=COEF_MAX)


@dataclass
class RewardWeights:
    goal: float = param(30.0, "Per goal scored (conceding costs the same).", **WEIGHT_RANGE)
    touch: float = param(0.0, "Per touch of the ball (a run of touching steps counts once).", **WEIGHT_RANGE)
    hit: float = param(0.0, "On a touch: the change in the ball's velocity (share of its top speed).", **WEIGHT_RANGE)
    shot: float = param(15.0, "On a touch: the change in the ball's velocity towards the opponent's goal (share of its "
                              "top speed; a hit towards the own goal costs).", **WEIGHT_RANGE)
    velocity_player_to_ball: float = param(0.1, "Car speed towards the ball (share of top speed).", **WEIGHT_RANGE)
    velocity_ball_to_goal: float = param(2.0, "Ball speed towards the opponent's goal (share of top speed).",
                                         **WEIGHT_RANGE)
    face_ball: float = param(0.05, "Cosine between the car's nose and the ball.", **WEIGHT_RANGE)
    boost: float = param(0.0, "sqrt(boost / 100) held.", **WEIGHT_RANGE)
    demo: float = param(0.5, "Per opponent demolished (being demolished costs the same).", **WEIGHT_RANGE)
    save: float = param(1.0, "Per touch of a ball heading fast into our goal area.", **WEIGHT_RANGE)


@dataclass
class RewardsConfig:
    mode: Literal["dense", "sparse"] = param("dense", "Weighted shaped terms, or goals only.")
    weights: RewardWeights = section(RewardWeights, "Weights of the dense terms (0 turns one off).")
    shaping_anneal_steps: int = param(
        0, "Agent steps of the network's training over which every dense term but the goal fades linearly to "
           "shaping_floor of its weight (0: never; dense mode only).", min=0, max=STEPS_MAX)
    shaping_floor: float = param(0.0, "The share of the dense terms' weights left after shaping_anneal_steps.",
                                 min=0, max=1)
    team_spirit: float = param(0.0, "In team games, the share of each car's reward replaced by its team's mean "
                                    "(0: its own; 1: the team's; as rlgym-tools' DistributeRewards), so a teammate's "
                                    "touch pays too and the cars stop racing each other to the ball.", min=0, max=1)


@dataclass
class OpponentMix:
    latest: float = param(0.3, "Share of slots playing the learner's latest snapshot.", min=0, max=1)
    past: float = param(0.05, "Share playing a uniformly chosen earlier version.", min=0, max=1)
    pfsp: float = param(0.2, "Share playing an earlier version chosen by PFSP.", min=0, max=1)
    rule: float = param(0.4, "Share playing the rule bot.", min=0, max=1)
    random: float = param(0.05, "Share playing the random bot.", min=0, max=1)
    community: float = param(0.0, "Share playing a community bot of the league (league bot add: Necto, Element) "
                                  "that plays this team size, drawn uniformly.", min=0, max=1)
    panel: float = param(0.0, "Share playing a member of the evaluation panel (training.panel: the teacher, the "
                              "community bots, the champion and past champions, the best snapshots of this run and "
                              "of others), chosen by PFSP over the learner's scores against them.", min=0, max=1)


@dataclass
class KickstartConfig:
    teacher: str = param("rule-pro", "Agent whose actions the learner is pulled towards early on (rule-pro, rule, or "
                                     "a champion when a new architecture starts out); empty: off.")
    weight: float = param(1.0, "Starting weight of the cross-entropy to the teacher's actions.", min=0,
                           max=COEF_MAX)
    steps: int = param(4_000_000, "The network's first agent steps of training (a resumed run, or one --from a "
                                  "trained agent, counts those agents' steps), over which the weight falls linearly "
                                  "to 0; PPO alone after.", min=1, max=STEPS_MAX)


@dataclass
class DistillConfig:
    teacher: str = param("", "League member to copy first (league train --distill NAME): the student plays, the frozen "
                             "teacher labels every state it sees with its whole action distribution, and the student's "
                             "policy is fitted to it (docs/distill.md); empty: off. It replaces kickstart.teacher, and "
                             "configs/distill.yaml's defaults (ppo.temperature 0.5, learning rate 1e-4 constant) "
                             "apply under the user's own.")
    steps: int = param(0, "Agent steps of the distillation phase (0: no step limit).", min=0, max=STEPS_MAX)
    minutes: float = param(0.0, "Minutes of the distillation phase (0: no limit); with steps and patience 0, the "
                                "whole run distils.", min=0, max=MINUTES_MAX)
    patience: int = param(30, "End the phase when held-out agreement (on each new batch, before it is trained on) has "
                              "not passed its best for this many updates (0: never).", min=0, max=1_000_000)
    weight: float = param(1.0, "Weight of the cross-entropy to the teacher during the phase (the policy loss and "
                               "the entropy bonus are off; the value loss keeps ppo.vf_coef).", min=0, max=COEF_MAX)
    learning_rate: float = param(1e-3, "Adam learning rate during the phase (constant).", min=1e-8, max=1.0)
    epochs: int = param(4, "Passes over each batch during the phase.", min=1, max=1000)
    guide_weight: float = param(0.1, "After the phase: weight of the cross-entropy to the teacher beside PPO.",
                                min=0, max=COEF_MAX)
    guide_decay_steps: int = param(0, "After the phase: agent steps over which the guide falls linearly to 0 (0: "
                                      "it stays).", min=0, max=STEPS_MAX)
    teacher_share: float = param(0.25, "After the phase: share of the league envs where the teacher is the "
                                       "opponent, until the student passes it.", min=0, max=1)
    pass_score: float = param(0.55, "Score rate against the teacher (wins + half the draws, from the payoff table) "
                                    "at which the student has passed it and the teacher's share drops to 0.",
                              min=0, max=1)


@dataclass
class TrainingConfig:
    steps: int = param(1_000_000, "Agent steps of experience to train for (0: until --minutes or Ctrl-C).", min=0,
                       max=STEPS_MAX)
    minutes: float = param(0.0, "Wall-clock budget in minutes (0: no limit).", min=0, max=MINUTES_MAX)
    snapshot_every_steps: int = param(200_000, "Agent steps between snapshots (checkpoint + registry version).",
                                      min=1, max=STEPS_MAX)
    ema_decay: float = param(0.0, "Snapshots take an exponential moving average of the learner's weights with this "
                                  "decay per update (training/averaging.py; 0: the live weights): a snapshot is then "
                                  "not one noisy step.", min=0, max=0.9999)
    eval_every_snapshots: int = param(4, "Snapshots between evaluation games (0: never); 4 with 200k-step snapshots "
                                         "keeps them to about 8% of a run on 2 cores (docs/runs/learning-defaults.md, run JJ).",
                                      min=0, max=1_000_000)
    eval_games: int = param(6, "Evaluation games against each baseline (random, atba, rule, rule-pro) and the "
                               "champion.", min=0, max=GAMES_MAX)
    eval_game_seconds: float = param(60.0, "Game clock of an evaluation game.", min=1, max=SECONDS_MAX)
    eval_viewer: Literal["", "rocketsimvis", "rlviser"] = param(
        "", "At each evaluation, play one more game of the snapshot against its last evaluation opponent and send it "
            "to this external viewer at real time, from a background thread (nothing when the viewer is not running); "
            "empty: none.")
    opponents: OpponentMix = section(OpponentMix, "Where self-play opponents come from.")
    kickstart: KickstartConfig = section(KickstartConfig, "Kickstarting: distil a teacher agent's actions early on.")
    distill: DistillConfig = section(DistillConfig, "Distillation: copy a league member first, then train past it.")
    pfsp_weighting: Literal["hard", "variance", "linear", "even"] = param("hard", "PFSP weighting of past versions.")
    payoff_decay: float = param(0.99, "Decay of old payoff counts at each snapshot.", min=0, max=1)
    max_opponents: int = param(4, "Most distinct opponent policies loaded at once.", min=1, max=256)
    best_response_to: str = param("", "Train a best response to this agent: every env plays it, frozen, with no "
                                      "self-play and no other opponent (league probe); empty: the opponent mix.")
    device: Literal["auto", "cpu", "cuda"] = param("auto", "Where the learner runs.")
    amp: Literal["auto", "off", "bf16", "fp16"] = param(
        "auto", "Learner mixed precision: auto is bf16 on CUDA, bf16 for the PPO update alone on a CPU with AMX tiles "
                "or AVX-512 BF16, off elsewhere; fp16 on a CPU falls back to float32.")
    compile: Literal["off", "default", "reduce-overhead", "max-autotune"] = param(
        "off", "torch.compile the learner's network (falls back to eager, saying why).")
    pin_memory: bool = param(True, "Page-locked staging for copies to a GPU (ignored on a CPU).")
    torch_threads: int = param(0, "Torch CPU threads for the learner (0: cores minus game workers, at least 1).",
                                min=0, max=THREADS_MAX)
    update_threads: int = param(0, "Torch CPU threads for the PPO update (0: every core while the game workers wait, "
                                   "the cores they leave while they play beside it, pipelined).",
                                 min=0, max=THREADS_MAX)


def sprt_problem(text: str) -> str | None:
    """What is wrong with an SPRT text such as "elo0=0,elo1=30,alpha=0.05,beta=0.05" (None: nothing),
    as the end of a config error sentence."""
    try:
        SprtParams.parse(text)
    except LeagueError as exc:
        return f"is not a valid SPRT ({show(text)}): {exc}"
    return None


def even_games_problem(games: int) -> str | None:
    """A match's cap is whole mirrored pairs: an even number of games."""
    return None if games % 2 == 0 else f"must be an even number of games (whole mirrored pairs), got {games}."


@dataclass
class PromotionConfig:
    sprt: str = param("elo0=0,elo1=30,alpha=0.05,beta=0.05",
                      "The SPRT a candidate must pass to be promoted (`league promote NAME --sprt`, and training): "
                      "H1, at least elo1 better than the stage's champion (rule when it has none), promotes; keys "
                      "as `league match --sprt` (elo0, elo1, alpha, beta, model).", check=sprt_problem)
    max_games: int = param(400, "The SPRT's cap for `league promote --sprt`: an even number of games; undecided there, "
                                "the champion stays.", min=2, max=10_000, check=even_games_problem)
    game_seconds: float = param(60.0, "Game clock of a promotion match game.", min=1, max=3600)
    during_training: bool = param(False, "During `league train`, test each evaluated snapshot against the stage's "
                                         "champion right after its evaluation, and promote it on H1.")
    training_max_games: int = param(40, "The SPRT's cap during training (the run waits for it): an even number of "
                                        "games.", min=2, max=10_000, check=even_games_problem)
    training_min_score: float = param(
        0.5, "During training, test only a snapshot whose evaluation score rate against the champion (rule when "
             "there is none) is at least this (0: every evaluated snapshot).", min=0, max=1)
    max_exploitability: float = param(
        1.0, "A gate before the SPRT (league promote --sprt, and training): the candidate's latest exploitability "
             "probe at its team size (league probe) may have won at most this share of its games; none recorded: "
             "refused. 1: no gate.", min=0, max=1)


@dataclass
class PanelConfig:
    games: int = param(400, "Games against each member at most (an even number: mirrored pairs), for a member still "
                            "undecided: one that clearly beats the candidate, or that it clearly beats, is decided "
                            "sooner; 0: no panel, the promotion test during training is the SPRT against the "
                            "champion alone.", min=0,
                       max=GAMES_MAX, check=even_games_problem)
    batch_games: int = param(20, "Games against each member still in play per round; after each round a member that "
                                 "clearly beats the candidate ends the test.", min=2, max=GAMES_MAX,
                             check=even_games_problem)
    z: float = param(1.96, "A member beats the candidate when the candidate's score against it is below 50% by more "
                           "than this many standard errors; one the candidate beats by as much leaves play.",
                     min=0, max=10)
    best_snapshots: int = param(2, "The best snapshots of the run, by their own panel tests, that join the panel.",
                                min=0, max=32)
    other_runs: int = param(2, "The best snapshots of other runs at the stage, by their panel tests, that join it.",
                            min=0, max=32)
    past_champions: int = param(4, "The stage's most recent past champions that join the panel (most recent "
                                    "first): a candidate that beats the title holder must not lose to the one the "
                                    "holder took the title from (champions can form a cycle).", min=0, max=32)
    nemeses: int = param(2, "The agents that scored best against the champion, and against each past champion on "
                            "the panel, in the title round robin (and its playoff) that crowned it or kept its title, "
                            "that join the panel: champions form cycles, and a candidate that beats the holders must "
                            "not lose to those they could not beat.", min=0, max=32)
    max_share: float = param(0.15, "Most share of a run's wall clock spent on panel tests and the promotion matches "
                                   "after them; a snapshot due while it is spent is not tested, a panel test in play "
                                   "when it is spent ends undecided after its round, and the SPRT after a passed test "
                                   "plays at most the games the share still holds.", min=0, max=1)
    closing_test: bool = param(True, "A run's last snapshot, when it is not one just judged, meets the evaluation "
                                     "and the panel after the run's clock, whatever share is spent: the run's pick "
                                     "does not lag its last weights (at most one test past panel.max_share).")
    title_games: int = param(40, "Games a pair of the title round robin after a run's closing test (arena/crown.py): "
                                 "the panel, the run's last snapshot and its best play every pair, and the entrant "
                                 "whose worst matchup is best takes the title; 0: none, the title changes by panel "
                                 "and SPRT alone.", min=0, max=GAMES_MAX, check=even_games_problem)
    title_snapshots: int = param(3, "The run's snapshots by Elo against their panel tests that enter the title round "
                                    "robin, beside its last snapshot and the panel (beaten ones too: a snapshot a "
                                    "member beat may still lose least to the rest).", min=0, max=32)
    title_average: int = param(0, "The run's last snapshots after its copy (a model soup, agents/averaged.py) whose "
                                  "weights' mean enters the title round robin as the run's next version, beside them: "
                                  "it holds the title only by its games; 0 or 1: none. Off: in run xa the mean of the "
                                  "last 30 was level with the champion and its neighbours, one more member of their "
                                  "cycle, and would not have taken the title (docs/runs/distill.md, thirty-first "
                                  "round).", min=0, max=64)
    title_entrants: int = param(12, "Entrants of the title round robin at most (its games grow with the square of "
                                    "their number): the run's own snapshots, the title holder, the teacher and the "
                                    "community bots always play, and the rest of the panel by the league's rating, "
                                    "best first, fill the places left; 0: no bound.", min=0, max=64)
    screen_games: int = param(20, "Games against each screen opponent (the teacher, the champion, the run's best "
                                  "tested snapshot) of every snapshot whose panel test the share put off, before the "
                                  "title round robin (training/screen.py); 0: no screen, an untested snapshot never "
                                  "enters it.", min=0, max=GAMES_MAX, check=even_games_problem)
    screened: int = param(2, "Snapshots the title screen lets into the title round robin at most: the best by mean "
                             "score over the screen's opponents, at least half.", min=0, max=32)
    playoff_games: int = param(100, "Games a pair of the title playoff (arena/crown.py): when entrants' worst matchups "
                                    "in the title round robin lie within panel.playoff_margin of the best, those "
                                    "contenders and each one's two worst opponents play again, and only a contender "
                                    "may take the title; 0: no playoff, ties go to points, then the holder.",
                               min=0, max=GAMES_MAX, check=even_games_problem)
    playoff_margin: float = param(0.1, "How close to the best worst matchup of the title round robin an entrant's "
                                       "must be to contend in the playoff (a score: 0.1 is 4 games in 40; 40 games "
                                       "put about 0.07 of noise on a score).", min=0, max=1)
    playoff_contenders: int = param(3, "Contenders in a title playoff at most (the best by worst matchup, then "
                                       "points): with each one's two worst opponents, 3 make 3-9 entrants.", min=2,
                                    max=32)


@dataclass
class Config:
    """The whole configuration of one command."""

    stage: Literal["1v1", "2v2", "3v3"] = param("1v1", "Curriculum stage the config is for.")
    seed: int = param(0, "Seed for everything random.", min=0, max=SEED_MAX)
    ratings: RatingsConfig = section(RatingsConfig, "Rating systems.")
    game: GameConfig = section(GameConfig, "The soccar game.")
    runner: RunnerConfig = section(RunnerConfig, "The vectorized game runner.")
    policy: PolicyConfig = section(PolicyConfig, "The policy network.")
    ppo: PpoConfig = section(PpoConfig, "The PPO learner.")
    rewards: RewardsConfig = section(RewardsConfig, "Training rewards.")
    training: TrainingConfig = section(TrainingConfig, "The self-play training loop.")
    panel: PanelConfig = section(PanelConfig, "The evaluation panel during training: the teacher, the community bots "
                                              "of the stage, the champion and the best snapshots (training/panel.py).")
    promotion: PromotionConfig = section(PromotionConfig, "Gated promotion: an SPRT against the champion decides "
                                                          "(docs/match.md).")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# --------------------------------------------------------------------------- loading


def shipped_config_dir() -> Path:
    """The configs/ folder that ships with the package."""
    return Path(str(resources.files("configs")))


def _parse_override(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise ConfigError(f"--set {show(text)}: expected KEY=VALUE, for example --set ratings.elo.k_factor=16.")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not KEY_RE.match(key):
        raise ConfigError(f"--set {show(text)}: expected KEY=VALUE with a dotted key such as ppo.epochs, "
                          f"got the key {show(key)}.")
    return key, parse_yaml(raw, f"--set {clip(text)}") if raw.strip() else ""


def _nest(dotted: str, value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    cur = out
    parts = dotted.split(".")
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value
    return out


GPU_FILE = "gpu.yaml"  # the learner's defaults on a GPU (load_config's `gpu`)
DISTILL_FILE = "distill.yaml"  # a run with a teacher's defaults (training.distill.teacher set)
# Keys that were moved: a file or flag that still sets one is told where it went, in one sentence.
MOVED_KEYS = {("training", "distill", "temperature"): "ppo.temperature (0.5 in a run with a teacher: configs/distill.yaml)",
              ("training", "distill", "ppo_learning_rate"): "ppo.learning_rate and ppo.lr_schedule (1e-4, constant in a "
                                                            "run with a teacher: configs/distill.yaml)"}
# A teacher's name -> what a new student of it is (a `policy` layer: its action space, its previous controls).
StudentOf = Callable[[str], dict[str, Any]]
SHIPPED_LAYERS = ("configs/base.yaml", "configs/league.yaml", "configs/rewards.yaml")


_UNSET = object()


def _layered(layers: list[tuple[str, dict[str, Any]]], path: tuple[str, ...], default: Any) -> Any:
    """The value the layers give the key at `path` (the last layer that sets it wins), else `default`."""
    value = default
    for _, data in layers:
        node: Any = data
        for key in path:
            node = node.get(key, _UNSET) if isinstance(node, dict) else _UNSET
        if node is not _UNSET:
            value = node
    return value



def _refuse_moved(data: dict[str, Any], source: str) -> None:
    """One sentence for a key that moved (MOVED_KEYS), naming where it went."""
    for path, now in MOVED_KEYS.items():
        if _layered([(source, data)], path, _UNSET) is not _UNSET:
            raise ConfigError(f"{source}: key {'.'.join(path)!r} is now {now}.")


def _learner_on_gpu(layers: list[tuple[str, dict[str, Any]]], gpu: Callable[[], bool]) -> bool:
    """Whether training.device, as the layers set it, puts the learner on a GPU (auto: ask `gpu`)."""
    device = _layered(layers, ("training", "device"), "auto")
    return device == "cuda" or (device == "auto" and gpu())


def load_config(
    stage: str | None = None,
    user_file: Path | None = None,
    home_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    sets: list[str] | None = None,
    config_dir: Path | None = None,
    gpu: Callable[[], bool] | None = None,
    agent_layer: tuple[str, dict[str, Any]] | None = None,
    student_of: StudentOf | None = None,
) -> Config:
    """Load the config tree for `stage` (default: the one base.yaml names).

    `gpu`, for commands that train: asked (only when training.device is auto) whether a GPU learner is
    available; when the learner will be on one, configs/gpu.yaml is layered right after the shipped files.

    `home_file` is the league home's own config.yaml (written by `league init --config`),
    layered between the shipped files and `user_file`.
    `overrides` are dotted keys set by dedicated flags (e.g. {"seed": 3}); `sets` are raw
    `KEY=VALUE` strings from `--set`. Both are validated like files.
    `agent_layer` (source, data): what an existing agent a run resumes or starts from is (its network, the
    temperature and learning rate it trained at), layered over the stage and under the user's file and flags.
    A run with a teacher (training.distill.teacher, as the layers set it) gets configs/distill.yaml and, from
    `student_of`, a new student that speaks its teacher's actions, both right after the shipped files: every
    choice of the user's wins, and this is the one place that decides what a distilling run's config is.
    """
    root = config_dir or shipped_config_dir()
    merged: dict[str, Any] = {}
    layers: list[tuple[str, dict[str, Any]]] = []
    for name in ("base.yaml", "league.yaml", "rewards.yaml"):
        path = root / name
        if path.exists():
            layers.append((f"configs/{name}", read_yaml(path, f"configs/{name}")))
    if home_file is not None and (home_file.exists() or home_file.is_symlink()):
        # present in any form: a symlink to /dev/zero, a FIFO or a folder is refused by read_yaml, never skipped
        home_layer = (str(home_file), read_yaml(home_file, str(home_file)))
        if "stage" in home_layer[1]:
            raise ConfigError(f"{home_file}: key 'stage' cannot be set in a league home's config; pass --stage.")
        layers.append(home_layer)
    if user_file is not None:
        user_layer = (str(user_file), read_yaml(user_file, str(user_file)))
    else:
        user_layer = None

    # The stage comes from the flag, else the user file, else base.yaml.
    chosen = stage
    if chosen is None and user_layer and "stage" in user_layer[1]:
        chosen = user_layer[1]["stage"]
    if chosen is None:
        for _, data in layers:
            chosen = data.get("stage", chosen) if isinstance(data, dict) else chosen
    chosen = "1v1" if chosen is None else chosen  # an empty --stage is an unknown stage, not the default
    team_size_of(chosen)  # an unknown stage fails here, before any file is read for it
    stage_path = root / "stages" / f"{chosen}.yaml"
    if stage_path.exists():
        layers.append((f"configs/stages/{chosen}.yaml", read_yaml(stage_path, f"configs/stages/{chosen}.yaml")))
    if agent_layer is not None:
        layers.append(agent_layer)
    if user_layer:
        layers.append(user_layer)
    for dotted, value in (overrides or {}).items():
        if value is not None:
            layers.append((f"the command-line flag for {dotted!r}", _nest(dotted, value)))
    flagged = {k for k, v in (overrides or {}).items() if v is not None}
    for text in sets or []:
        key, value = _parse_override(text)
        if key in flagged:  # which should win is the user's to say, not the order of layers
            raise ConfigError(f"{key} is given twice, by its own flag and by --set {clip(text)}; give it once.")
        layers.append((f"--set {clip(text)}", _nest(key, value)))
    layers.append(("the chosen stage", {"stage": chosen}))
    if gpu is not None and (root / GPU_FILE).exists() and _learner_on_gpu(layers, gpu):
        shipped = sum(1 for source, _ in layers if source in SHIPPED_LAYERS)
        layers.insert(shipped, (f"configs/{GPU_FILE}", read_yaml(root / GPU_FILE, f"configs/{GPU_FILE}")))

    teacher = _layered(layers, ("training", "distill", "teacher"), "")
    if teacher:
        at = sum(1 for source, _ in layers if source in (*SHIPPED_LAYERS, f"configs/{GPU_FILE}"))
        teaching = ([(f"configs/{DISTILL_FILE}", read_yaml(root / DISTILL_FILE, f"configs/{DISTILL_FILE}"))]
                    if (root / DISTILL_FILE).exists() else [])
        if student_of is not None:
            teaching.append((f"a student of {teacher}", student_of(teacher)))
        layers[at:at] = teaching
    for source, data in layers:
        _refuse_moved(data, source)
        validate(Config, data, source)
        merged = merge(merged, data)
    cfg = build(Config, merged)
    expected_size = team_size_of(cfg.stage)
    if cfg.game.team_size != expected_size:
        raise ConfigError(
            f"game.team_size is {cfg.game.team_size} but stage {cfg.stage} needs {expected_size}; "
            "set the stage instead of the team size."
        )
    return cfg

