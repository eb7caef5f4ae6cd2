"""PPO and recurrent PPO updates over a RolloutBuffer.

The learner owns the network, the optimizer and the buffer; a driver either hands it whole
collected segments (`ingest`, the self-play loop: training.collection) or steps the
environments itself, storing each step (training.measure.stepwise: the update benchmarks, a test on
a classic-control task); when the buffer is full it calls `update`. Feed-forward minibatches are shuffled agent steps;
recurrent minibatches are whole fixed-length sequences cut by env slot, replayed from the
LSTM state stored at their first step (truncated backprop through time).

A non-finite loss or gradient before the update has taken a step skips the update: the weights and
optimizer state from before it are restored and the event is counted, so one bad batch never
poisons the learner. An update whose own steps make the weights non-finite (or larger than a
checkpoint may hold, agents.checkpoint.MAX_WEIGHT), or the loss non-finite, has diverged: the
weights from before it are restored and TrainingDiverged is raised, for the driver to stop the run
(a learning rate far too large is the usual cause); its weights are never trained on or saved.
"""

from __future__ import annotations

import copy
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from agents.checkpoint import MAX_WEIGHT
from agents.networks import LstmState
from league.config import PpoConfig
from league.errors import LeagueError
from training.accel import Accel
from training.guide import UpdatePlan
from training.rollout import RolloutBuffer
from training.segment import Segment


@dataclass
class UpdateStats:
    policy_loss: float = 0.0
    value_loss: float = 0.0
    entropy: float = 0.0
    approx_kl: float = 0.0
    clip_fraction: float = 0.0
    explained_variance: float = 0.0
    grad_norm: float = 0.0
    kickstart_loss: float = 0.0
    teacher_agreement: float = 0.0
    kickstart_weight: float = 0.0
    start_log_ratio: float = 0.0  # mean |log pi_learner - log pi_behaviour| on the first minibatch, before any step
    learning_rate: float = 0.0
    minibatches: int = 0
    skipped: bool = False
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    def as_log(self) -> dict[str, float]:
        return {
            "losses/policy_loss": self.policy_loss, "losses/value_loss": self.value_loss,
            "losses/entropy": self.entropy, "losses/approx_kl": self.approx_kl,
            "losses/clip_fraction": self.clip_fraction, "losses/explained_variance": self.explained_variance,
            "losses/grad_norm": self.grad_norm, "charts/learning_rate": self.learning_rate,
            "charts/update_seconds": self.seconds, "charts/skipped_update": float(self.skipped),
            "charts/start_abs_log_ratio": self.start_log_ratio,
            **({"losses/kickstart": self.kickstart_loss, "losses/teacher_agreement": self.teacher_agreement,
                "charts/kickstart_weight": self.kickstart_weight} if self.kickstart_weight else {}),
        }


def _clip_groups(model: nn.Module) -> list[list[nn.Parameter]]:
    """Parameter groups clipped separately: actor head, critic head, then the rest (LSTM trunk)."""
    heads = [list(getattr(model, name).parameters()) for name in ("actor", "critic") if hasattr(model, name)]
    seen = {id(p) for group in heads for p in group}
    rest = [p for p in model.parameters() if id(p) not in seen]
    return [g for g in (*heads, rest) if g]


class MinibatchStats(NamedTuple):
    """What one minibatch step measured. The fields named in AVERAGED are averaged over the
    update into the UpdateStats fields of the same name; abs_log_ratio is kept from the first
    minibatch only (UpdateStats.start_log_ratio)."""

    policy_loss: float
    value_loss: float
    entropy: float
    approx_kl: float
    clip_fraction: float
    grad_norm: float
    kickstart_loss: float
    teacher_agreement: float
    abs_log_ratio: float  # mean |log pi_learner - log pi_behaviour|


AVERAGED = MinibatchStats._fields[:-1]


class ReturnScale:
    """Running standard deviation of the discounted return per slot, to divide rewards by, so the
    critic sees targets of about unit scale whatever the reward weights are (rewards are scaled,
    not centred, so their sign keeps its meaning)."""

    def __init__(self, slots: int, gamma: float, device: torch.device):
        self.gamma = gamma
        self.running = torch.zeros(slots, device=device)  # discounted return so far, per slot
        self.count, self.mean, self.m2 = 0, 0.0, 0.0

    def update(self, rewards: torch.Tensor, episode_starts: torch.Tensor) -> float:
        """Fold a rollout's [T, N] rewards into the statistics; returns the current scale."""
        returns = torch.empty_like(rewards)
        for t in range(rewards.shape[0]):
            self.running = self.running * self.gamma * (1.0 - episode_starts[t]) + rewards[t]
            returns[t] = self.running
        n = returns.numel()
        batch_mean, batch_var = float(returns.mean()), float(returns.var(unbiased=False))
        delta, total = batch_mean - self.mean, self.count + n
        self.m2 += batch_var * n + delta * delta * self.count * n / total
        self.mean += delta * n / total
        self.count = total
        return max(math.sqrt(self.m2 / self.count), 1e-4) if math.isfinite(self.m2) else 1.0

    def stats(self) -> dict[str, float]:
        """The statistics to resume with (the per-slot running returns restart at zero)."""
        return {"return_count": float(self.count), "return_mean": self.mean, "return_m2": self.m2}

    def load(self, stats: dict[str, float]) -> None:
        self.count = int(stats.get("return_count", 0))
        self.mean = float(stats.get("return_mean", 0.0))
        self.m2 = float(stats.get("return_m2", 0.0))


class TrainingDiverged(LeagueError):
    """The update's own steps made the network's weights or loss non-finite (or its weights absurdly large)."""

    def __init__(self, what: str, learning_rate: float):
        self.what, self.learning_rate = what, learning_rate
        super().__init__(f"The PPO update made the network's {what}; the learning rate "
                         f"(ppo.learning_rate={learning_rate:g}) is the usual cause.")


def _finite_batch(batch: dict) -> bool:
    """Whether a minibatch's float data is finite (a bad batch is skipped; good data with a bad loss is divergence)."""
    return all(bool(torch.isfinite(t).all()) for t in batch.values()
               if isinstance(t, torch.Tensor) and t.is_floating_point())


def _weights_problem(parameters) -> str | None:
    """What is wrong with the weights (None: nothing): one max-abs per tensor and one sync, once per update."""
    peaks = torch.stack([p.detach().abs().max().float() for p in parameters if p.numel()])
    peak = float(peaks.max())
    if not math.isfinite(peak):  # NaN propagates through max, and infinity is not finite
        return "weights non-finite (NaN or infinity)"
    if peak > MAX_WEIGHT:
        return f"weights larger than {MAX_WEIGHT:g} in magnitude (on their way to non-finite values)"
    return None


class PpoLearner:
    def __init__(self, model: nn.Module, cfg: PpoConfig, slots: int, obs_dim: int,
                 device: torch.device | str = "cpu", seed: int = 0,
                 accel: Accel | None = None, teacher: bool = False):
        """`teacher`: store a teacher's label per step (its action distribution in the network's
        action space). Each update is handed the run's schedules (training.guide.UpdatePlan): the
        loss adds its guide's weight x the cross-entropy from the teacher's distribution to the
        policy's (Schmitt et al., 2018; annealed to 0, or a small permanent guide), and a distilling
        guide drops the PPO policy loss and the entropy bonus: the policy is fitted to the teacher
        alone while the critic learns the returns of the states it visits."""
        self.model = model.to(device)
        self.cfg = cfg
        self.device = torch.device(device)
        self.accel = accel or Accel(self.device)
        self.recurrent = bool(getattr(model, "recurrent", False))
        # Fused Adam: one kernel for all parameters (4x faster per step than the per-tensor loop on CPU).
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5,
                                          fused=self.device.type in ("cpu", "cuda"))
        self.space = model.space
        self.buffer = RolloutBuffer(cfg.steps_per_env, slots, obs_dim, self.device,
                                    lstm_hidden=model.hidden_size if self.recurrent else None,
                                    teacher=self.space.logits if teacher else 0)
        self.extra_stats: dict[str, float] = {}  # the driver's state kept with each checkpoint (learner_stats)
        self.updates_done = 0
        self.skipped_updates = 0
        self.generator = torch.Generator(device="cpu").manual_seed(seed)
        self.state = model.initial_state(slots, self.device) if self.recurrent else None
        self.slots = slots
        self.return_scale = ReturnScale(slots, cfg.gamma, self.device) if cfg.normalize_returns else None
        self.clip_groups = _clip_groups(self.model)

    # ------------------------------------------------------------------ collection

    def ingest(self, segment: Segment) -> None:
        """Fill the buffer with a collected segment (training.segment) in one copy per array; its
        width may differ from the last one's (a Ray rollout worker lost or replaced)."""
        steps, slots = segment.actions.shape
        if (steps, slots) != (self.buffer.steps, self.buffer.slots):
            self.buffer = RolloutBuffer(steps, slots, segment.obs.shape[-1], self.device,
                                        lstm_hidden=self.model.hidden_size if self.recurrent else None,
                                        teacher=self.space.logits if self.buffer.teacher_probs is not None else 0)
            if self.return_scale is not None and slots != self.slots:
                self.return_scale.running = torch.zeros(slots, device=self.device)
            self.slots = slots
        buf = self.buffer
        for name in ("obs", "actions", "logprobs", "values", "rewards", "episode_starts"):
            getattr(buf, name).copy_(self._tensor(getattr(segment, name)), non_blocking=True)
        if buf.teacher_probs is not None and segment.teacher_probs is not None:
            buf.teacher_probs.copy_(self._tensor(segment.teacher_probs), non_blocking=True)
        if self.recurrent:
            buf.hidden.copy_(self._tensor(segment.hidden), non_blocking=True)
            h, c = self._tensor(segment.next_hidden).to(self.device)
            self.state = LstmState(h[None].contiguous(), c[None].contiguous())
        buf.t = steps

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        with warnings.catch_warnings():  # a segment from Ray's object store is read-only; it is only read here
            warnings.simplefilter("ignore", UserWarning)
            tensor = torch.from_numpy(array)
        return tensor.pin_memory() if self.accel.pin_memory else tensor

    @torch.no_grad()
    def held_out(self) -> tuple[float, float]:
        """(agreement, cross-entropy) of the policy with the teacher's labels on the batch in the buffer,
        before any update on it: every head's most likely choice equal to the teacher's, and the
        cross-entropy from the teacher's distribution to the policy's (agents.action_spaces)."""
        buf = self.buffer
        if self.recurrent:
            state = LstmState(buf.hidden[0, 0][None].contiguous(), buf.hidden[0, 1][None].contiguous())
            logits, _ = self.model.sequence_forward(buf.obs, state, buf.episode_starts)
        else:
            logits, _ = self.model(buf.obs.reshape(-1, buf.obs.shape[-1]))
        logits, labels = logits.float().reshape(-1, self.space.logits), buf.teacher_probs.reshape(-1, self.space.logits)
        return (float(self.space.agreement(logits, labels).mean()),
                float(self.space.cross_entropy(logits, labels).mean()))

    @torch.no_grad()
    def bootstrap_value(self, obs: torch.Tensor, episode_start: torch.Tensor) -> torch.Tensor:
        """Value of the observation after the rollout's last step (state is not advanced)."""
        obs = obs.to(self.device).float()
        episode_start = episode_start.to(self.device).float()
        _, value, _ = self.model.step(obs, self.state, episode_start)
        return value.float()

    # ------------------------------------------------------------------ update

    def _learning_rate(self, plan: UpdatePlan) -> float:
        if plan.guide.learning_rate is not None:  # distilling: the phase's own, constant
            return plan.guide.learning_rate
        if self.cfg.lr_schedule == "linear":
            return self.cfg.learning_rate * max(0.0, 1.0 - plan.progress)
        return self.cfg.learning_rate

    def update(self, next_obs: torch.Tensor, next_episode_start: torch.Tensor,
               plan: UpdatePlan = UpdatePlan()) -> UpdateStats:
        """Run the PPO epochs over the full buffer, then clear it; `plan`: the run's schedules for this update
        (the budget spent, for the learning rate; the teacher's guide)."""
        start = time.perf_counter()
        buf, cfg = self.buffer, self.cfg
        last_value = self.bootstrap_value(next_obs, next_episode_start)
        if self.return_scale is not None:
            buf.rewards /= self.return_scale.update(buf.rewards, buf.episode_starts)
        buf.compute_gae(last_value, next_episode_start.to(self.device).float(), cfg.gamma, cfg.gae_lambda)
        lr = self._learning_rate(plan)
        guide = plan.guide
        configured = cfg.learning_rate if guide.learning_rate is None else guide.learning_rate  # what a person sets
        weight = guide.weight if buf.teacher_probs is not None else 0.0
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        good_model = copy.deepcopy(self.model.state_dict())
        good_optim = copy.deepcopy(self.optimizer.state_dict())

        stats = UpdateStats(learning_rate=lr, kickstart_weight=weight)
        sums = dict.fromkeys(AVERAGED, 0.0)
        stop = False
        for _ in range(guide.epochs or cfg.epochs):
            for batch in (self._sequence_batches() if self.recurrent else self._flat_batches()):
                out = self._minibatch_step(batch, weight, guide.distilling)
                if out is None:
                    self._restore(good_model, good_optim)
                    if stats.minibatches and _finite_batch(batch):  # the update's own steps broke the network
                        raise TrainingDiverged("loss non-finite (NaN or infinity)", configured)
                    stats.skipped = True
                    self.skipped_updates += 1
                    stop = True
                    break
                if not stats.minibatches:
                    stats.start_log_ratio = out.abs_log_ratio
                for name in AVERAGED:
                    sums[name] += getattr(out, name)
                stats.minibatches += 1
                if cfg.target_kl and out.approx_kl > cfg.target_kl:
                    stop = True
                    break
            if stop:
                break
        problem = None if stats.skipped else _weights_problem(self.model.parameters())
        if problem:
            self._restore(good_model, good_optim)
            raise TrainingDiverged(problem, configured)
        if stats.minibatches:
            for name, total in sums.items():
                setattr(stats, name, total / stats.minibatches)
        y, v = buf.returns.flatten(), buf.values.flatten()
        var_y = torch.var(y)
        stats.explained_variance = float(1 - torch.var(y - v) / var_y) if var_y > 0 else float("nan")
        self.updates_done += 1
        buf.reset()
        stats.seconds = time.perf_counter() - start
        return stats

    def _restore(self, model_state, optim_state) -> None:
        self.model.load_state_dict(model_state)
        self.optimizer.load_state_dict(optim_state)

    def _flat_batches(self):
        buf = self.buffer
        n = buf.steps * buf.slots
        order = torch.randperm(n, generator=self.generator).to(self.device)
        flat = {
            "obs": buf.obs.reshape(n, -1), "actions": buf.actions.reshape(n), "logprobs": buf.logprobs.reshape(n),
            "values": buf.values.reshape(n), "advantages": buf.advantages.reshape(n), "returns": buf.returns.reshape(n),
        }
        if buf.teacher_probs is not None:
            flat["teacher"] = buf.teacher_probs.reshape(n, -1)
        size = min(self.cfg.minibatch_size, n)
        for lo in range(0, n - size + 1, size):
            idx = order[lo:lo + size]
            yield {k: v[idx] for k, v in flat.items()}

    def _sequence_batches(self):
        """Minibatches of whole sequences: (sequence start, env slot) pairs, shuffled."""
        buf, cfg = self.buffer, self.cfg
        seq = min(cfg.sequence_length, buf.steps)
        starts = torch.arange(0, buf.steps - seq + 1, seq)
        pairs = torch.cartesian_prod(starts, torch.arange(buf.slots))  # [S, 2]
        pairs = pairs[torch.randperm(len(pairs), generator=self.generator)]
        per_batch = max(1, cfg.minibatch_size // seq)
        time_idx = torch.arange(seq)
        for lo in range(0, len(pairs), per_batch):
            chunk = pairs[lo:lo + per_batch]
            t = (chunk[:, 0][None, :] + time_idx[:, None]).to(self.device)  # [seq, B]
            slot = chunk[:, 1][None, :].expand(seq, -1).to(self.device)
            first_t, first_slot = chunk[:, 0].to(self.device), chunk[:, 1].to(self.device)
            batch = {
                "obs": buf.obs[t, slot], "actions": buf.actions[t, slot], "logprobs": buf.logprobs[t, slot],
                "values": buf.values[t, slot], "advantages": buf.advantages[t, slot], "returns": buf.returns[t, slot],
                "episode_starts": buf.episode_starts[t, slot],
                "state": (buf.hidden[first_t, 0, first_slot][None].contiguous(),
                          buf.hidden[first_t, 1, first_slot][None].contiguous()),
            }
            if buf.teacher_probs is not None:
                batch["teacher"] = buf.teacher_probs[t, slot]
            yield batch

    def _clip_gradients(self) -> torch.Tensor:
        """Clip the actor's, the critic's and any shared trunk's gradients each to max_grad_norm;
        returns the actor's norm. (One global clip lets the critic's large value-loss gradient
        shrink the policy's step to almost nothing.)"""
        norms = [nn.utils.clip_grad_norm_(group, self.cfg.max_grad_norm) for group in self.clip_groups]
        return norms[0] if all(math.isfinite(float(n)) for n in norms) else torch.tensor(float("nan"))

    def _minibatch_step(self, b, guide_weight: float, distilling: bool) -> MinibatchStats | None:
        cfg = self.cfg
        with self.accel.autocast():
            if self.recurrent:
                logits, value = self.model.sequence_forward(b["obs"], LstmState(*b["state"]), b["episode_starts"])
            else:
                logits, value = self.model(b["obs"])
        space, logits = self.space, logits.float()
        played = logits / cfg.temperature  # the policy the rollout sampled; the guide fits the logits as they are
        logprob, entropy, value = space.log_prob(played, b["actions"]), space.entropy(played), value.float()
        adv = b["advantages"]
        if cfg.normalize_advantages and adv.numel() > 1:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        log_ratio = logprob - b["logprobs"]
        ratio = log_ratio.exp()
        with torch.no_grad():
            approx_kl = ((ratio - 1) - log_ratio).mean()
            abs_log_ratio = log_ratio.abs().mean()
            clip_frac = ((ratio - 1.0).abs() > cfg.clip_coef).float().mean()
        pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
        if cfg.clip_value:
            clipped = b["values"] + (value - b["values"]).clamp(-cfg.clip_coef, cfg.clip_coef)
            v_loss = 0.5 * torch.max((value - b["returns"]) ** 2, (clipped - b["returns"]) ** 2).mean()
        else:
            v_loss = 0.5 * ((value - b["returns"]) ** 2).mean()
        ent = entropy.mean()
        loss = cfg.vf_coef * v_loss if distilling else pg_loss - cfg.ent_coef * ent + cfg.vf_coef * v_loss
        kick_loss = agreement = torch.zeros(())
        if guide_weight > 0:
            kick_loss = space.cross_entropy(logits, b["teacher"]).mean()
            loss = loss + guide_weight * kick_loss
            with torch.no_grad():
                agreement = space.agreement(logits, b["teacher"]).mean()
        if not torch.isfinite(loss):
            return None
        self.optimizer.zero_grad(set_to_none=True)
        scaler = self.accel.scaler
        if scaler is not None:  # fp16: scaled loss; an overflow only lowers the scale
            scaler.scale(loss).backward()
            scaler.unscale_(self.optimizer)
            grad_norm = self._clip_gradients()
            scaler.step(self.optimizer)
            scaler.update()
        else:
            loss.backward()
            grad_norm = self._clip_gradients()
            if not math.isfinite(float(grad_norm)):
                return None
            self.optimizer.step()
        return MinibatchStats(
            policy_loss=float(pg_loss.detach()), value_loss=float(v_loss.detach()), entropy=float(ent.detach()),
            approx_kl=float(approx_kl), clip_fraction=float(clip_frac), grad_norm=float(grad_norm),
            kickstart_loss=float(kick_loss.detach()), teacher_agreement=float(agreement),
            abs_log_ratio=float(abs_log_ratio))
