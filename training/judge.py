"""What training asks after a snapshot: its evaluation games, and with promotion.during_training whether it
becomes the champion. Built once and handed to the trainer, which asks `judge.due(snapshots)`, then
`judge.judge(name, network, snapshots, steps=..., elapsed=...)`.

The promotion test, for a snapshot whose evaluation score against the champion passes the gate
(arena.promotion.training_gate):
1. with a panel (`panel.games` > 0), the evaluation panel (training.panel): the teacher, the stage's
   community bots, the champion and past champions, the best snapshots so far; a member that clearly
   beats it ends the test, and it passes only with at least half against every member;
2. when it passed (or there is no panel), an SPRT against the champion (arena.promotion): H1
   makes it the champion.
Panel tests and the SPRTs after them take at most `panel.max_share` of the run's wall clock: a snapshot
due while the share is spent is not tested, and says so. The run's last snapshot is judged after its clock
(`closing=True`, panel.closing_test) whatever the share spent: in a measured run the share was spent with
20 snapshots to go, and the last four, +94 to +135 Elo against Necto, were never tested.

Then, with `panel.title_games`, the title round robin (arena/crown.py, `judge.title(last, say)`): first the
snapshots the share put off meet the title screen (training/screen.py), then the panel, the run's last snapshot,
its best, those the screen let in (and with `panel.title_average` the mean of its last snapshots' weights) play
every pair, and the entrant whose worst matchup is best holds the title.
The panel tests a challenger; the title holder is never tested again, and strength this high is not a ladder.
Entrants within `panel.playoff_margin` of the best worst matchup then play a playoff (`panel.playoff_games`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arena.engine.cores import usable_cores
from league.config import Config
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import Registry
from league.schedule import planned_games
from league.stores.panels import PanelTest
from training.evaluation import Player, evaluate_snapshot, player
from training.panel import panel_members, play_panel, title_entrants
from training.seeds import derived_seed

if TYPE_CHECKING:
    from arena.crown import Crowning


@dataclass(frozen=True)
class Judged:
    """What judging one snapshot gave: metrics rows to log and keep, and lines to say."""

    rows: list[dict[str, float]]
    notes: list[str]


@dataclass
class SnapshotJudge:
    """Evaluation during training and the promotion test after it (see the module notes)."""

    cfg: Config
    registry: Registry
    home: LeagueHome
    device: Any
    workers: int
    run: str = ""  # the training run whose snapshots are judged (its panel tests are kept under it)
    earlier_cpu_minutes: float = 0.0  # what the run's earlier calls spent (a resumed run): the learning curve's x
    promotion_seconds: float = field(default=0.0, init=False)  # wall clock spent on panel tests and SPRTs
    seconds_a_game: float = field(default=0.0, init=False)  # the last panel test's pace (0: none played yet): what
    # bounds the SPRT after a passed test to the run's share of the clock
    said_copying: bool = field(default=False, init=False)  # whether a run's note on its copy phase was said
    last: str = field(default="", init=False)  # the last snapshot judged (its promotion test played or turned away)
    put_off: dict[str, dict[str, float]] = field(default_factory=dict, init=False)  # the evaluation rates of the
    # last snapshot whose promotion test the share put off: a closing test of it plays no evaluation games again
    untested: list[str] = field(default_factory=list, init=False)  # every snapshot whose promotion test the share put
    # off and no closing test played, oldest first: the title screen's candidates (training/screen.py)

    def owes(self, name: str) -> bool:
        """Whether snapshot `name` is still to be judged: never judged, or its promotion test put off."""
        return name != self.last

    def due(self, snapshots: int) -> bool:
        """Whether the `snapshots`-th snapshot of a call is evaluated (every training.eval_every_snapshots)."""
        t = self.cfg.training
        return bool(t.eval_every_snapshots and t.eval_games and snapshots % t.eval_every_snapshots == 0)

    def judge(self, name: str, net: Any, snapshots: int, *, steps: int = 0, elapsed: float = 0.0,
              copying: bool = False, closing: bool = False) -> Judged:
        """Snapshot `name` (the network's current weights, `steps` trained, `elapsed` seconds into the run) plays
        the evaluation games; then, with promotion during training, the promotion test, unless the run is still
        `copying` its teacher (a distillation phase: a half-made copy meets no panel, whose share of the clock is
        kept for the snapshots after it). The run's `closing` test (its last snapshot, after its clock) is not
        held to the share. The network is left in train mode."""
        from agents.nn_policy import NetworkPolicy

        cfg, t = self.cfg, self.cfg.training
        team_size = cfg.game.team_size
        policy = NetworkPolicy(net, device=self.device, name=name, temperature=cfg.ppo.temperature)
        judged = Judged([], [])
        try:
            rates = self.put_off.pop(name, None) if closing else None
            if rates is None:  # a snapshot put off has played its evaluation games
                rates = evaluate_snapshot(self.registry, name, policy, team_size, t.eval_games, t.eval_game_seconds,
                                          derived_seed(cfg.seed, "evaluation", snapshots), self.home.root,
                                          cfg.game.tick_skip, workers=self.workers, viewer=t.eval_viewer,
                                          opening_jitter=cfg.game.opening_jitter)
                row = {f"eval/win_rate/{k}": v for k, v in rates.items()}
                row["eval/elo"] = self.registry.game_store.rating(name, team_size).elo
                judged.rows.append(row)
            if cfg.promotion.during_training and copying:
                if not self.said_copying:
                    judged.notes.append("promotion: no panel while the student copies its teacher; snapshots meet "
                                        "it from the end of the distillation phase")
                    self.said_copying = True
            elif cfg.promotion.during_training:
                self._promotion_test(judged, Player(name, policy), rates, snapshots, steps, elapsed, closing=closing)
        finally:
            net.train()  # NetworkPolicy put the shared network in eval mode
        if name not in self.put_off:
            self.last = name
        return judged

    def title(self, last: str, say: Callable[[str], None]) -> bool:
        """The title round robin at the end of the run whose last snapshot is `last`, then its playoff when
        entrants tie near the top (see the module notes). Each line is `say`-ed as it happens: the games are
        played after the run's clock, and a person should know what the run is waiting for. False when Ctrl-C
        cut it short (its games so far are kept)."""
        from arena.crown import open_playoff, open_title_round_robin
        from arena.promotion import promotion_config

        cfg, team_size = self.cfg, self.cfg.game.team_size
        teacher = cfg.training.distill.teacher or None
        try:
            screened = self._screen(say, teacher)
        except KeyboardInterrupt:
            say("title: screen interrupted; no title round robin played, the title where it was")
            return False
        entrants, left_out = title_entrants(self.registry, team_size, last, run=self.run, teacher=teacher,
                                            cfg=cfg.panel, screened=[*screened, *self._average(say, last)])
        if left_out:
            say(f"title: {len(left_out)} panel member(s) left out of the round robin (panel.title_entrants "
                f"{cfg.panel.title_entrants}), the weakest by the league's rating: {', '.join(left_out)}")
        seed = derived_seed(cfg.seed, "title")
        played = promotion_config(cfg, seed)
        try:
            tid = open_title_round_robin(self.registry, played, entrants, games_per_pair=cfg.panel.title_games, seed=seed)
        except LeagueError as exc:  # an entrant's ratings are damaged: the run's snapshots are kept all the same
            say(f"title: not played: {exc}")
            return True
        try:
            crowning = self._crown(say, tid, played, "round robin")
            if crowning is None or not cfg.panel.playoff_games:
                return True
            played = promotion_config(cfg, derived_seed(cfg.seed, "title playoff"))
            try:
                playoff = open_playoff(self.registry, played, crowning)
            except LeagueError as exc:
                say(f"title: no playoff: {exc}")
                return True
            if playoff is None:
                return True
            tid = playoff.id
            say(f"title: {', '.join(playoff.contenders)} within {cfg.panel.playoff_margin:.0%} of the best worst "
                f"matchup: a playoff (round robin {tid}) with their worst opponents")
            self._crown(say, tid, played, "playoff")
        except KeyboardInterrupt:
            say(f"title: round robin {tid} interrupted, the title where it was; finish it with "
                f"`league tournament --resume {tid}`, then `league crown --tournament {tid}`")
            return False
        return True

    def _average(self, say: Callable[[str], None], last: str) -> list[str]:
        """`panel.title_average`: the mean of the weights of the run's last snapshots up to `last` (after its copy,
        averages of earlier calls left out), registered as the run's next version, which enters the title round
        robin; [] when fewer than two are there."""
        from agents.averaged import average_agents
        from agents.checkpoint import read_checkpoint_meta
        from agents.loading import checkpoint_file
        from training.snapshots import next_version

        k, store = self.cfg.panel.title_average, self.registry.agent_store
        versions = store.run_versions(self.run)
        if k < 2 or last not in versions:
            return []
        pool: list[str] = []
        for agent in map(store.get, reversed(versions[:versions.index(last) + 1])):
            if agent.status != "active" or (agent.config or {}).get("averaged_from"):
                continue
            meta = read_checkpoint_meta(checkpoint_file(agent, self.home.root), agent.checkpoint_sha256)
            if "distill_steps" in ((meta.optimizer or {}).get("learner_stats") or {}):
                break  # the copy phase's snapshots: a half-made copy is no ingredient
            pool.insert(0, agent.name)
            if len(pool) == k:
                break
        if len(pool) < 2:
            say(f"title: no average of the run's last snapshots (panel.title_average {k}): fewer than two after its "
                "copy")
            return []
        try:
            name = average_agents(self.home, self.registry, pool, next_version(self.run, versions)).name
        except LeagueError as exc:  # a full disk, a damaged snapshot: the round robin plays without it
            say(f"title: no average of the run's last snapshots: {exc}")
            return []
        say(f"title: {name}, the mean of the weights of the run's last {len(pool)} snapshots ({pool[0]} to "
            f"{pool[-1]}), enters the round robin")
        return [name]

    def _screen(self, say: Callable[[str], None], teacher: str | None) -> list[str]:
        """The title screen (training/screen.py): the snapshots whose panel test the share put off play a short match
        against the screen's opponents; the names of those that enter the title round robin."""
        from training.screen import play_screen, screen_opponents

        cfg, team_size = self.cfg, self.cfg.game.team_size
        active = {a.name for a in self.registry.agent_store.all(team_size)}
        untested = [n for n in self.untested if n in active]
        if not (untested and cfg.panel.screen_games and cfg.panel.screened):
            return []
        opponents = screen_opponents(self.registry, team_size, run=self.run, teacher=teacher, z=cfg.panel.z)
        games = cfg.panel.screen_games
        say(f"title: screen of the {len(untested)} snapshot(s) the share put off, {games} games against each of "
            f"{', '.join(opponents)}: {games * len(untested) * len(opponents):,} games at most")
        started = time.perf_counter()
        planned = games * sum(c != o for c in untested for o in opponents)  # none against itself
        try:
            result = play_screen(self.registry, [player(self.registry, n, self.home.root) for n in untested],
                                 [player(self.registry, n, self.home.root) for n in opponents], games,
                                 team_size=team_size, game_seconds=cfg.promotion.game_seconds,
                                 seed=derived_seed(cfg.seed, "title screen"), tick_skip=cfg.game.tick_skip,
                                 workers=self.workers, opening_jitter=cfg.game.opening_jitter,
                                 on_game=_quarters(planned, lambda done: say(
                                     f"title: screen: {done:,} of {planned:,} games played, "
                                     f"{time.perf_counter() - started:.0f} s")))
        finally:
            self.promotion_seconds += time.perf_counter() - started
        entering = result.entering(cfg.panel.screened)
        table = ", ".join(f"{s.name} {s.score:.0%}" for s in result.screened)
        chosen = ", ".join(s.name for s in entering) or "none (none scored half)"
        say(f"title: screen played in {time.perf_counter() - started:.0f} s; mean scores: {table}; into the round "
            f"robin: {chosen}")
        return [s.name for s in entering]

    def _crown(self, say: Callable[[str], None], tid: int, played: Config, what: str) -> Crowning | None:
        """Play title round robin `tid` (`what`: round robin or playoff) and decide the title from it: the crowning,
        or None with a note when the title changed hands meanwhile (its games stay recorded)."""
        from arena.crown import crown, play_title_round_robin

        t = self.registry.tournament_store.get(tid)
        planned = planned_games(len(t.entrants), t.games_per_pair)
        say(f"title: {what} {tid} of {len(t.entrants)} entrants after the run's clock: "
            f"{planned:,} games, {t.games_per_pair} a pair")
        started = time.perf_counter()
        try:
            play_title_round_robin(self.registry, self.home, played, tid, workers=self.workers,
                                   on_game=_quarters(planned, lambda done: say(
                                       f"title: {what} {tid}: {done:,} of {planned:,} games played, "
                                       f"{time.perf_counter() - started:.0f} s")))
            crowning = crown(self.registry, tid)
        except LeagueError as exc:
            say(f"title: not decided: {exc}")
            return None
        finally:
            self.promotion_seconds += time.perf_counter() - started
        table = ", ".join(f"{e.name} {e.worst:.0%} (vs {e.worst_against})" for e in crowning.entrants)
        say(f"title: {what} played in {time.perf_counter() - started:.0f} s; worst matchups: {table}")
        say(f"title: {crowning.summary()}")
        return crowning

    def _promotion_test(self, judged: Judged, candidate: Player, rates: dict[str, float], snapshots: int,
                        steps: int, elapsed: float, closing: bool = False) -> None:
        from arena.promotion import promote_in_training, training_gate

        cfg, name = self.cfg, candidate.name
        note = training_gate(self.registry, cfg, name, rates)
        if note is not None:
            judged.notes.append(note)
            return
        share = cfg.panel.max_share
        if elapsed > 0 and self.promotion_seconds > share * elapsed:
            taken = self.promotion_seconds / elapsed
            if not closing:
                judged.notes.append(f"promotion: {name} not tested: promotion tests have taken {taken:.0%} of the "
                                    f"run's time, above panel.max_share {share:.0%}")
                self.put_off = {name: rates}
                self.untested.append(name)
                return
            judged.notes.append(f"promotion: {name}, the run's last snapshot, is tested after the run's clock although "
                                f"promotion tests have taken {taken:.0%} of its time (panel.closing_test)")
        if name in self.untested:
            self.untested.remove(name)  # its closing test
        started = time.perf_counter()
        try:
            stop = None if closing else self._share_spent(started, elapsed)
            if cfg.panel.games and not self._panel_passes(judged, candidate, snapshots, steps, elapsed, stop):
                return
            max_games = None if closing else self._sprt_games_left(started, elapsed)
            if max_games is not None and max_games < cfg.panel.batch_games:
                judged.notes.append(f"promotion: {name} not tested against the champion: promotion tests have taken "
                                    f"panel.max_share {share:.0%} of the run's time; left to the title screen")
                self.untested.append(name)
                return
            attempt = promote_in_training(self.home, self.registry, cfg, name,
                                          derived_seed(cfg.seed, "promotion", snapshots), self.workers,
                                          max_games=max_games)
            judged.notes.append(attempt.note)
            if attempt.metrics():
                judged.rows.append(attempt.metrics())
        finally:
            self.promotion_seconds += time.perf_counter() - started

    def _share_spent(self, started: float, elapsed: float) -> Callable[[], bool]:
        """Whether promotion tests, with the one `started` then (`elapsed` seconds into the run), have now taken more
        than panel.max_share of the run's time: a test in play ends there, as none starts past it. Asked between
        a panel test's rounds (at 2v2 one test of seven members took 2,700 games, the share of a 22-minute call 54%)."""
        return lambda: self._seconds_left(started, elapsed) < 0

    def _seconds_left(self, started: float, elapsed: float) -> float:
        """The seconds promotion tests may still take, with the one `started` then (`elapsed` seconds into the run),
        within panel.max_share of the run's time (negative: spent). Spending x more keeps promotion_seconds + now + x
        <= share * (elapsed + now + x): x <= (share * (elapsed + now) - promotion_seconds - now) / (1 - share)."""
        share, now = self.cfg.panel.max_share, time.perf_counter() - started
        return (share * (elapsed + now) - self.promotion_seconds - now) / max(1.0 - share, 1e-9)

    def _sprt_games_left(self, started: float, elapsed: float) -> int | None:
        """The SPRT games against the champion that the run's share of the clock still holds, with the test `started`
        then (`elapsed` seconds into the run), at the last panel test's pace, even and at most
        promotion.training_max_games (None: no pace measured, the cap alone). Before, an SPRT of up to 400 games
        followed a passed test whatever the share."""
        if not self.seconds_a_game:
            return None
        games = int(max(self._seconds_left(started, elapsed), 0.0) / self.seconds_a_game) // 2 * 2
        return min(games, self.cfg.promotion.training_max_games)

    def _panel_passes(self, judged: Judged, candidate: Player, snapshots: int, steps: int, elapsed: float,
                      stop: Callable[[], bool] | None = None) -> bool:
        """Play `candidate` against the panel, record the test, say how it went; whether it passed (training.panel).
        `stop`: whether the run's share of the clock is spent, between rounds; a test it cuts short goes to the
        title screen, as one the share put off."""
        cfg, team_size = self.cfg, self.cfg.game.team_size
        members = panel_members(self.registry, team_size, candidate.name, run=self.run,
                                teacher=cfg.training.distill.teacher or None, cfg=cfg.panel)
        seed = derived_seed(cfg.seed, "panel", snapshots)
        started = time.perf_counter()
        outcome = play_panel(self.registry, candidate, [player(self.registry, m, self.home.root) for m in members],
                             cfg.panel, team_size=team_size, game_seconds=cfg.promotion.game_seconds, seed=seed,
                             tick_skip=cfg.game.tick_skip, workers=self.workers,
                             opening_jitter=cfg.game.opening_jitter, stop=stop)
        test = self.registry.panel_store.add(candidate.name, self.run, steps, outcome.records, passed=outcome.passed,
                                             beaten_by=outcome.beaten_by, seconds=time.perf_counter() - started,
                                             seed=seed, opening_jitter=cfg.game.opening_jitter)
        if outcome.games:
            self.seconds_a_game = test.seconds / outcome.games
        judged.rows.append(panel_row(self.registry, test, self.earlier_cpu_minutes + cpu_minutes(elapsed)))
        records = ", ".join(f"{m} {r.score:.0%} ({r})" for m, r in outcome.records.items() if r.games)
        if outcome.cut_short:
            judged.notes.append(f"panel: {candidate.name} undecided after {outcome.games} games: promotion tests have "
                                f"taken panel.max_share {cfg.panel.max_share:.0%} of the run's time; left to the title "
                                f"screen; {records}")
            self.untested.append(candidate.name)
        elif outcome.passed:
            judged.notes.append(f"panel: {candidate.name} scored half or more against every member in {outcome.games} "
                                f"games: {records}")
        else:
            judged.notes.append(f"panel: {candidate.name} not promoted: {outcome.beaten_by} beat it "
                                f"({outcome.records[outcome.beaten_by].score:.0%} over "
                                f"{outcome.records[outcome.beaten_by].games} games); {records}")
        return outcome.passed


def cpu_minutes(elapsed: float) -> float:
    """CPU-minutes of `elapsed` seconds of a training call: its wall clock times the host's cores (a run keeps every
    core busy)."""
    return elapsed / 60.0 * usable_cores()


def panel_row(registry: Registry, test: PanelTest, run_cpu_minutes: float) -> dict[str, float]:
    """The metrics of a panel test: the snapshot's Elo against the panel with its 95% interval (PanelTest.elo and
    elo_interval: each member weighs the same), whether it passed or ended undecided (its run's share of the clock
    spent mid-test), the stage's champion's Elo against the panel it last met, the worst matchup's score, and the
    run's CPU-minutes so far (over all its calls), the learning curve's x."""
    low, high = test.elo_interval
    row = {"panel/elo": test.elo, "panel/elo_lo": low, "panel/elo_hi": high,
           "panel/games": float(test.total.games), "panel/passed": float(test.passed),
           "panel/undecided": float(test.undecided), "panel/cpu_minutes": run_cpu_minutes}
    worst = test.worst
    if worst is not None:
        row["panel/worst_score"] = worst[1].score
    champion = registry.agent_store.champion(test.team_size)
    held = registry.panel_store.of(champion.name) if champion else []
    if held:
        row["panel/champion_elo"] = held[-1].elo
    return row


def _quarters(planned: int, say: Callable[[int], None]) -> Callable[[object], None]:
    """An on_game callback that says the games done each time a quarter of `planned` more have been played (the
    title's games come after the run's clock, minutes of them: a person should see them move)."""
    done = said = 0

    def on_game(_outcome: object) -> None:
        nonlocal done, said
        done += 1
        if done * 4 // max(planned, 1) > said:
            said = done * 4 // max(planned, 1)
            say(done)
    return on_game
