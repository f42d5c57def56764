"""The SAC-GRU trainer: losses, optimisation, target averaging, published actor snapshots, and the checkpoint
interface (`state_arrays`, `load_state_arrays`; the array names live in `sacbot.agent.trainer_state`).

`_update` is SAC with twin critics and automatic temperature, as CleanRL writes it, over windows of
L = burn_in + train_len transitions (L + 1 states), time-major:
1. Burn-in: actor and critics over s_0..s_{b-1} from the stored actor state and zeros, no gradient.
2. Policy: one actor pass over s_b..s_L gives a ~ pi(.|s_t) for the trained steps (actor loss) and, shifted by
   one, for their next states (targets).
3. Critic loss: one pass of both critics over (s, a)_b..L-1 gives Q(s_t, a_t); the target is
   r + gamma (1 - d) (min_k Q_targ,k(s_{t+1}, a') - alpha log pi(a'|s_{t+1})), a' ~ pi, each Q_targ one GRU
   step of the target weights from the critic's hidden state after step t. That history comes from the online
   critics' pass (target_history="online", default; Polyak keeps the two close) or from a full pass of the
   target critics over the window (target_history="target"). n_step > 1: n-step soft targets
   (`sacbot.agent.n_step`).
4. Actor loss: alpha log pi(a|s_t) - min_k Q_k(s_t, a), a ~ pi, critic weights detached: one GRU step of the
   critics from their data hidden state h_{t-1}. Kickstarting adds weight * the teacher's distillation term;
   with the Q-filter (`kickstart_filter`) only on the states where min_k Q_k(s_t, teacher(s_t)) is above
   min_k Q_k(s_t, tanh mu(s_t)), the same critic step. Self-imitation (`self_imitation`) adds weight * the
   same squared distance toward the replay's own actions a_t, on the states where min_k Q_k(s_t, a_t) (step
   3's values) is above min_k Q_k(s_t, tanh mu(s_t)). Hindsight aim (`hindsight_aim`) adds weight * the
   squared distances of the mean gun turn and fire entry from the replay's hindsight labels, where a step has
   them (`sacbot.agent.hindsight`: the gun turn before each shot, the fire entry on cool-gun steps); the
   teacher's entries are left out there, and its fire entry elsewhere asks for its power wherever the gun
   points (its own aim no longer decides when to fire); `hindsight_trigger` scales the fire entry's
   term (0: none, the teacher's fire entry everywhere); `hindsight_distance = "absolute"` takes absolute
   distances instead of squared ones (the labels' median in place of their mean), `"hit"` the gun's
   Cauchy distance within the enemy's half-width (`hindsight.hit_distance`: their densest side);
   `hindsight_target = "bearing"` labels the steps before the aiming step toward the enemy's bearing plus
   the shot's offset.
5. Temperature loss: -log alpha (log pi + target entropy).
6. One backward of the three losses (all use the networks as they were before this pass), each optimiser's
   gradient-norm clip and step, then the soft (Polyak) target update.
The speed-ups sit behind the seam `sacbot.agent.accel`, called where one applies: the GRU passes (through the
networks) and the actor loss's critic step (`accel.actor_q`, which reuses step 3's hidden-side gates);
SACBOT_ACCEL=none runs each as plain torch. No Python loop over time
outside the GRU; one host sync (the metrics) per pass.
"""

from __future__ import annotations

import copy
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch
from torch import Tensor

from sacbot.agent import accel, trainer_state
from sacbot.agent.features import input_columns
from sacbot.agent.hindsight import LABEL_DIM, hindsight_aim, hit_distance
from sacbot.agent.n_step import n_step_targets
from sacbot.agent.networks import Actor, TwinCritic, squashed_sample
from sacbot.agent.replay import Batch, SequenceReplay
from sacbot.agent.teacher import distillation_loss, surf_movement, teacher_action
from sacbot.agent.trainer_config import TrainerConfig, resolve_device


@dataclass(frozen=True)
class ActorSnapshot:
    """Immutable published actor weights: `version` counts publications; arrays are read-only numpy."""

    version: int
    updates: int
    arrays: Mapping[str, np.ndarray]


def clipping_divisors(groups: list[list[Tensor]], max_norm: float) -> list[tuple[Tensor, Tensor]]:
    """For each group of parameters: the total L2 norm of its gradients and the divisor that clips them to
    max_norm, max(1, (norm + 1e-6) / max_norm), as `torch.nn.utils.clip_grad_norm_` scales them. One norm
    kernel for every gradient of every group."""
    norms = torch._foreach_norm([p.grad for group in groups for p in group if p.grad is not None])
    out: list[tuple[Tensor, Tensor]] = []
    start = 0
    for group in groups:
        count = sum(p.grad is not None for p in group)
        part = norms[start : start + count]
        start += count
        total = torch.linalg.vector_norm(torch.stack(part)) if part else group[0].new_zeros(())
        out.append((total, ((total + 1e-6) / max_norm).clamp_min(1.0)))
    return out


def _numpy_copy(t: Tensor) -> np.ndarray:
    """A fresh numpy copy of a tensor's values (on the CPU without a trip through torch's `to`)."""
    t = t.detach()
    return t.numpy().copy() if t.device.type == "cpu" else t.cpu().numpy()


class SacTrainer:
    """Owns the networks, optimisers, replay and random generators of one learner.

    Thread model: one thread runs `train_step`/`update`; others may call `state_arrays` (it waits for the
    running pass, so the arrays are consistent) and read `snapshot` (one reference read, never blocks).
    """

    def __init__(self, config: TrainerConfig | None = None, replay: SequenceReplay | None = None) -> None:
        self.config = cfg = config or TrainerConfig()
        self.device = resolve_device(cfg.device)
        accel.prepare_process()  # process-wide settings of the speed-ups (the heap's)
        sz = cfg.sizes
        with torch.random.fork_rng(devices=[]):  # seeded initial weights, the global generator untouched
            torch.manual_seed(cfg.seed)
            self.actor = Actor(sz).to(self.device)
            self.critic = TwinCritic(sz).to(self.device)
            self.target = TwinCritic(sz).to(self.device)
        self.target.load_state_dict(self.critic.state_dict())
        self.target.requires_grad_(False)
        self.log_alpha = torch.tensor(math.log(cfg.init_alpha), device=self.device, requires_grad=True)
        # Fused Adam: one kernel per step instead of a handful per parameter (its state made up front, so
        # every checkpoint array exists from the start).
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=cfg.actor_lr, fused=True)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg.critic_lr, fused=True)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=cfg.alpha_lr, fused=True)
        for opt in (self.actor_opt, self.critic_opt, self.alpha_opt):
            for group in opt.param_groups:
                for p in group["params"]:  # Adam's own lazy initial state, made now so every array exists
                    opt.state[p] = {
                        "step": torch.zeros((), dtype=torch.float32, device=p.device),
                        "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                        "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format),
                    }
        # The policy noise comes from one CPU generator on any device: a seed draws the same noise on cuda as
        # on the CPU, and the generator's saved state (rng.torch) has one shape, so a checkpoint written on
        # either loads on the other.
        self.generator = torch.Generator()
        self.generator.manual_seed(cfg.seed)
        self.np_rng = np.random.default_rng(cfg.seed)
        relabel = None
        if cfg.hindsight_aim > 0.0:
            relabel = partial(
                hindsight_aim,
                arena_width=cfg.arena_width,
                arena_height=cfg.arena_height,
                steps=cfg.hindsight_steps,
                target=cfg.hindsight_target,
                gun_offset=sz.gun_offset,
            )
        self.replay = replay or SequenceReplay(
            cfg.replay_capacity,
            sz.stored_dim,
            sz.action_dim,
            sz.hidden,
            window=cfg.window,
            relabel=relabel,
            label_dim=LABEL_DIM if relabel else 0,
        )
        if self.replay.window != cfg.window:
            raise ValueError("replay window differs from burn_in + train_len")
        if cfg.hindsight_aim > 0.0 and self.replay.labels is None:
            raise ValueError("hindsight_aim needs a replay that labels its rounds (relabel)")
        self.env_steps = 0
        self.updates = 0
        self._lock = threading.Lock()
        self._critic_params: list[Tensor] = list(self.critic.parameters())
        self._target_params: list[Tensor] = list(self.target.parameters())
        self._actor_params: list[Tensor] = list(self.actor.parameters())
        self._all_params = [*self._critic_params, *self._actor_params, self.log_alpha]
        self.snapshot: ActorSnapshot = ActorSnapshot(0, 0, self.actor_arrays())
        # The frozen actor the anchor term (`TrainerConfig.anchor`) pulls toward: the one the first update
        # starts from (the start's weights, loaded by then)
        self.anchor_actor: Actor | None = None

    # -- data ---------------------------------------------------------------------------------------------
    def record(
        self,
        obs: np.ndarray,
        action: np.ndarray,
        reward: float,
        next_obs: np.ndarray,
        done: bool,
        hidden: np.ndarray,
    ) -> None:
        """Store one environment transition (with the actor hidden state it acted from) and count it."""
        self.replay.add(obs, action, reward, next_obs, done, hidden)
        self.env_steps += 1

    def end_round(self) -> None:
        """Close the open round without a terminal flag (a truncated or aborted round: no bootstrap cut)."""
        self.replay.end_round()

    def ready(self) -> bool:
        return self.replay.windows_available() > 0

    def train_step(self) -> dict[str, float] | None:
        """Sample a batch and run one update pass; None while the replay holds no complete window."""
        with self._lock:
            try:
                batch = self.replay.sample(self.config.batch_size, self.np_rng, self.config.fresh_fraction)
            except ValueError:
                return None
            return self._update(batch)

    def update(self, batch: Batch) -> dict[str, float]:
        with self._lock:
            return self._update(batch)

    # -- the SAC pass -------------------------------------------------------------------------------------
    def _tensors(self, batch: Batch) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor | None]:
        """The batch as time-major tensors: obs (L+1, B, the actor's input width), act (L, B, A), rew,
        done (L, B), h0 (B, H), the critics' inputs (L+1, B, the critics' state width): obs, then the
        critics' own inputs stored after the state (`NetworkSizes.critic_only_dim`; obs itself when none),
        and the replay's labels (L, B, LABEL_DIM; None without them)."""
        dev = self.device
        sz = self.config.sizes

        def tm(a: np.ndarray) -> Tensor:
            return torch.as_tensor(np.ascontiguousarray(a.swapaxes(0, 1)), device=dev)

        stored = tm(batch.obs)
        obs = stored[..., : sz.observed_dim]
        columns = input_columns(obs, sz, torch)
        if columns:  # the networks read the state (and wave inputs), then the angle, energy and lead inputs
            obs = torch.cat([obs, torch.stack(columns, -1)], -1)
        critic_obs = torch.cat([obs, stored[..., sz.observed_dim :]], -1) if sz.critic_only_dim else obs
        return (
            obs,
            tm(batch.action),
            tm(batch.reward),
            tm(batch.done),
            torch.as_tensor(batch.hidden, device=dev),
            critic_obs,
            None if batch.labels is None else tm(batch.labels),
        )

    def losses(
        self,
        obs: Tensor,
        act: Tensor,
        rew: Tensor,
        done: Tensor,
        h0: Tensor,
        critic_obs: Tensor | None = None,
        labels: Tensor | None = None,
    ) -> dict[str, Tensor]:
        """All SAC losses of one pass (graphs attached), on time-major tensors; see the module docstring.
        `critic_obs` is what the critics read for a state (obs when None; `_tensors`); `labels` the replay's
        hindsight labels (L, B, LABEL_DIM), read with `hindsight_aim` on."""
        cfg = self.config
        b, L = cfg.burn_in, cfg.window
        alpha = self.log_alpha.detach().exp()
        cobs = obs if critic_obs is None else critic_obs
        x = torch.cat([cobs[:L], act], -1)  # the critics' inputs (s, a): (L, B, S + A)
        ws = self.critic.weights()

        # 1. Burn-in, no gradient.
        zeros = self.critic.initial_hidden(obs.shape[1])
        with torch.no_grad():
            h_actor = self.actor.last_hidden_tm(obs[:b], h0) if b else h0
            h_critic = self.critic.hidden_tm(x[:b], zeros, ws)[:, -1] if b else zeros  # (2, B, H)

        # 2. Policy over states b..L: a ~ pi(.|s_t) and log pi, (T+1, B, A) and (T+1, B).
        mu, log_std, _ = self.actor.sequence_tm(obs[b:], h_actor)
        noise = torch.randn(mu.shape, generator=self.generator).to(self.device, non_blocking=True)
        a_pi, logp = squashed_sample(mu, log_std, noise)

        # 3. Critic loss against the twin target critics' soft target.
        q, h_seq, gh_seq = self.critic.sequence_tm(x[b:], h_critic, ws)  # (2, T, B), (2, T, B, H), gates
        with torch.no_grad():
            h_after = h_seq.detach()  # each critic's history through steps b..L-1
            if cfg.target_history == "target":
                h_after = self.target.hidden_tm(x, zeros)[:, b:]
            q_next = self.target.step(torch.cat([cobs[b + 1 :], a_pi[1:]], -1), h_after).min(0).values
            v_next = q_next - alpha * logp[1:]
            if cfg.n_step == 1:
                y = rew[b:] + cfg.gamma * (1.0 - done[b:]) * v_next
            else:
                y = n_step_targets(rew[b:], done[b:], v_next, cfg.gamma, cfg.n_step)
        per_critic = (q - y).pow(2).mean(dim=(1, 2))  # (2,): each critic's own loss
        critic_loss = per_critic.sum()

        # 4. Actor loss: min(Q1, Q2) of one critic step from h_{t-1} with (s_t, a ~ pi), critics detached.
        h_prev = torch.cat([h_critic.unsqueeze(1), h_seq[:, :-1].detach()], 1)  # (2, T, B, H)
        q_pi = accel.actor_q(self.critic, torch.cat([cobs[b:L], a_pi[:-1]], -1), h_prev, gh_seq)
        logp_now = logp[:-1]
        actor_loss = (alpha * logp_now - q_pi).mean()
        kick = torch.zeros((), device=self.device)
        kept = torch.ones((), device=self.device)
        imitate = torch.zeros((), device=self.device)
        imitated = torch.zeros((), device=self.device)
        mean_action, states, critic_states = torch.tanh(mu[:-1]), obs[b:L], cobs[b:L]
        hindsight = torch.zeros((), device=self.device)
        aimed = torch.zeros((), device=self.device)
        teacher_entries: Tensor | None = None
        if cfg.hindsight_aim > 0.0:
            if labels is None:
                raise ValueError("hindsight_aim is on but the batch has no labels")
            gun, gun_weight, fire, fire_weight = labels[b:L].unbind(-1)
            if cfg.hindsight_trigger == 0.0:  # no trigger label: the teacher's fire entry on every step
                fire_weight = torch.zeros_like(fire_weight)
            distance = torch.abs if cfg.hindsight_distance == "absolute" else torch.square
            gap = mean_action[..., 2] - gun
            if cfg.hindsight_distance == "hit":  # the gun's labels are directions: a hit is near one
                gun_distance = hit_distance(
                    gap, states, cfg.arena_width, cfg.arena_height, cfg.sizes.gun_offset
                )
            else:
                gun_distance = distance(gap)
            hindsight = (
                gun_weight * gun_distance
                + cfg.hindsight_trigger * fire_weight * distance(mean_action[..., 3] - fire)
            ).mean()
            aimed = gun_weight.mean()
            ones = torch.ones_like(gun)  # the hindsight targets take the teacher's place where they are
            teacher_entries = torch.stack([ones, ones, 1.0 - gun_weight, 1.0 - fire_weight], -1)
        q_own: Tensor | None = None
        kick_on = cfg.kickstart_weight(self.updates) > 0.0
        if (kick_on and cfg.kickstart_filter) or cfg.self_imitation > 0.0:
            with torch.no_grad():  # the critics' value of the actor's own mean action
                own = torch.cat([critic_states, mean_action], -1)
                q_own = accel.actor_q(self.critic, own, h_prev, gh_seq)
        if kick_on:
            keep = None
            # With hindsight aim the gun is not on the teacher's aim, nor with the wave gun (its guess factor
            # is one of several the enemy may take): the fire entry asks for the power regardless.
            with torch.no_grad():
                seen = obs[:L] if cfg.teacher_surf else states  # surfing reads the burn-in steps too
                wave = cfg.teacher_gun == "wave"
                wave_at = cfg.sizes.state_dim if wave else -1
                on_aim = cfg.hindsight_aim == 0.0 and not wave
                w, h = cfg.arena_width, cfg.arena_height
                taught = teacher_action(seen, w, h, on_aim, cfg.sizes.gun_offset, wave_at)
                if cfg.teacher_surf:
                    moves = surf_movement(seen, taught[..., :2], cfg.sizes.threat_at, w, h)
                    taught = torch.cat([moves, taught[..., 2:]], -1)[b:]
            if cfg.kickstart_filter:  # the Q-filter: imitate where the critics prefer the teacher's action
                assert q_own is not None
                with torch.no_grad():
                    q_taught = accel.actor_q(
                        self.critic, torch.cat([critic_states, taught], -1), h_prev, gh_seq
                    )
                    keep = (q_taught > q_own).to(mean_action.dtype)
                    kept = keep.mean()
            kick = distillation_loss(
                mean_action,
                states,
                cfg.arena_width,
                cfg.arena_height,
                keep,
                taught,
                cfg.movement_scale(self.updates),
                teacher_entries,
            )
        anchored = torch.zeros((), device=self.device)
        if cfg.anchor > 0.0 and self.anchor_actor is not None:  # toward the actor the learner started from
            with torch.no_grad():
                h_anchor = self.anchor_actor.last_hidden_tm(obs[:b], h0) if b else h0
                mu_anchor, _, _ = self.anchor_actor.sequence_tm(obs[b:L], h_anchor)
            anchored = distillation_loss(
                mean_action,
                states,
                cfg.arena_width,
                cfg.arena_height,
                None,
                torch.tanh(mu_anchor),
                cfg.anchor_movement,
            )
        if cfg.self_imitation > 0.0:  # toward the replay's own actions where the critics rate them higher
            assert q_own is not None
            with torch.no_grad():
                better = (q.min(0).values > q_own).to(mean_action.dtype)
                imitated = better.mean()
            imitate = distillation_loss(
                mean_action, states, cfg.arena_width, cfg.arena_height, better, act[b:L]
            )

        # 5. Temperature loss.
        alpha_loss = -(self.log_alpha * (logp_now.detach() + cfg.entropy_target())).mean()
        return {
            "critic_loss": critic_loss,
            "qf1_loss": per_critic[0].detach(),
            "qf2_loss": per_critic[1].detach(),
            "actor_loss": actor_loss,
            "alpha_loss": alpha_loss,
            "entropy": -logp_now.detach().mean(),
            "q": q.detach().mean(),
            "kickstart_loss": kick,  # the actor minimises actor_loss + kickstart * kickstart_loss
            "kickstart_kept": kept,  # the share of states the Q-filter kept in the term (1 without it)
            "self_imitation_loss": imitate,  # the actor minimises ... + self_imitation * self_imitation_loss
            "self_imitation_kept": imitated,  # the share of states whose replay action the critics preferred
            "hindsight_aim_loss": hindsight,  # the actor minimises ... + hindsight_aim * hindsight_aim_loss
            "hindsight_aim_share": aimed,  # the share of trained states with a hindsight target
            "anchor_loss": anchored,  # the actor minimises ... + anchor * anchor_loss
        }

    def _update(self, batch: Batch) -> dict[str, float]:
        cfg = self.config
        if cfg.anchor > 0.0 and self.anchor_actor is None:  # the actor this learner starts updating
            self.anchor_actor = copy.deepcopy(self.actor).requires_grad_(False)
        loss = self.losses(*self._tensors(batch))
        kick_weight = cfg.kickstart_weight(self.updates)
        actor_total = loss["actor_loss"]
        if kick_weight > 0.0:
            actor_total = actor_total + kick_weight * loss["kickstart_loss"]
        if cfg.self_imitation > 0.0:
            actor_total = actor_total + cfg.self_imitation * loss["self_imitation_loss"]
        if cfg.hindsight_aim > 0.0:
            actor_total = actor_total + cfg.hindsight_aim * loss["hindsight_aim_loss"]
        if cfg.anchor > 0.0:
            actor_total = actor_total + cfg.anchor * loss["anchor_loss"]

        # 6. One backward; each optimiser clips its gradients' norm (the divisor goes to Adam as its
        # grad_scale) and steps; then the soft target update. During the critics' warm-up only they step.
        warming = self.updates < cfg.critic_warmup
        for p in self._all_params:
            p.grad = None
        total = loss["critic_loss"] if warming else loss["critic_loss"] + actor_total + loss["alpha_loss"]
        total.backward()
        (critic_norm, critic_div), (actor_norm, actor_div) = clipping_divisors(
            [self._critic_params, self._actor_params], cfg.grad_clip
        )
        steps: list[tuple[torch.optim.Adam, Tensor | None]] = [(self.critic_opt, critic_div)]
        if not warming:
            steps += [(self.actor_opt, actor_div), (self.alpha_opt, None)]
        for opt, divisor in steps:
            opt.grad_scale = divisor  # type: ignore[attr-defined]  # fused Adam divides the gradients by it
            opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(self._target_params, self._critic_params, cfg.tau)
        self.updates += 1
        return self._metrics(loss, critic_norm, actor_norm, kick_weight)

    def _metrics(
        self, loss: dict[str, Tensor], critic_norm: Tensor, actor_norm: Tensor, kick_weight: float
    ) -> dict[str, float]:
        """The pass's figures (its one host sync); the new actor is published first."""
        values = torch.stack(
            [
                loss["critic_loss"].detach(),
                loss["actor_loss"].detach(),
                loss["alpha_loss"].detach(),
                self.log_alpha.detach().exp(),
                loss["entropy"],
                loss["q"],
                critic_norm,
                actor_norm,
                loss["kickstart_loss"].detach(),
                loss["qf1_loss"],
                loss["qf2_loss"],
                loss["kickstart_kept"],
                loss["self_imitation_loss"].detach(),
                loss["self_imitation_kept"],
                loss["hindsight_aim_loss"].detach(),
                loss["hindsight_aim_share"],
                loss["anchor_loss"].detach(),
            ]
        ).tolist()
        self.publish()
        keys = ("critic_loss", "actor_loss", "alpha_loss", "alpha", "entropy", "q_mean", "critic_grad_norm")
        kicks = ("kickstart_loss", "qf1_loss", "qf2_loss", "kickstart_kept")
        own = ("self_imitation_loss", "self_imitation_kept", "hindsight_aim_loss", "hindsight_aim_share")
        names = (*keys, "actor_grad_norm", *kicks, *own, "anchor_loss")
        metrics: dict[str, float] = dict(zip(names, values, strict=True))
        if self.config.kickstart > 0.0:
            metrics["kickstart_weight"] = kick_weight
        if not (self.config.kickstart > 0.0 and self.config.kickstart_filter):
            del metrics["kickstart_kept"]
        if not self.config.self_imitation > 0.0:
            del metrics["self_imitation_loss"], metrics["self_imitation_kept"]
        if not self.config.hindsight_aim > 0.0:
            del metrics["hindsight_aim_loss"], metrics["hindsight_aim_share"]
        if not self.config.anchor > 0.0:
            del metrics["anchor_loss"]
        metrics["updates"] = float(self.updates)
        metrics["replay_size"] = float(len(self.replay))
        metrics["env_steps"] = float(self.env_steps)
        return metrics

    @property
    def alpha(self) -> float:
        return float(self.log_alpha.detach().exp())

    # -- publishing ---------------------------------------------------------------------------------------
    def actor_arrays(self) -> dict[str, np.ndarray]:
        """The actor's weights as float32 numpy arrays named `actor.<torch name>` (fresh copies)."""
        return {f"actor.{name}": _numpy_copy(p) for name, p in self.actor.named_parameters()}

    def _frozen_actor_arrays(self) -> dict[str, np.ndarray]:
        arrays = self.actor_arrays()
        for a in arrays.values():
            a.setflags(write=False)
        return arrays

    def publish(self) -> ActorSnapshot:
        """Publish the current actor as a new immutable snapshot (a single reference swap)."""
        snap = ActorSnapshot(self.snapshot.version + 1, self.updates, self._frozen_actor_arrays())
        self.snapshot = snap
        return snap

    # -- checkpoint interface -----------------------------------------------------------------------------
    def network_sizes(self) -> dict[str, Any]:
        return self.config.sizes.as_dict()

    def state_arrays(self) -> dict[str, np.ndarray]:
        """Every tensor of the learner (actor, critic1/2, target1/2, log_alpha, Adam state), the random
        generators and the counters, as numpy arrays with stable names. Consistent: taken between passes."""
        with self._lock:
            return trainer_state.state_arrays(self)

    def array_specs(self) -> dict[str, tuple[tuple[int, ...], str]]:
        """name -> (shape, dtype) of every array `state_arrays` gives (and `load_state_arrays` expects)."""
        return trainer_state.array_specs(self)

    def load_state_arrays(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Restore everything `state_arrays` saved; training then continues bit-identically.

        Raises ValueError naming the first missing or mis-shaped array (nothing is changed then).
        """
        trainer_state.check_arrays(self.array_specs(), arrays)
        with self._lock, torch.no_grad():
            trainer_state.load_arrays(self, arrays)
            version = int(arrays["counters.actor_version"])
            self.snapshot = ActorSnapshot(version, self.updates, self._frozen_actor_arrays())
