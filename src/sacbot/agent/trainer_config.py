"""The learner's settings: `TrainerConfig` (sizes, rates, window, n-step, kickstarting) and the torch device
its `device` setting names (`resolve_device`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import get_args

import torch

from sacbot.agent.networks import NetworkSizes
from sacbot.agent.options import HindsightDistance, HindsightTarget, TeacherGun
from sacbot.errors import UserError


@dataclass(frozen=True)
class TrainerConfig:
    """Trainer settings; the defaults are the issue's."""

    sizes: NetworkSizes = field(default_factory=NetworkSizes)
    batch_size: int = 64
    burn_in: int = 8
    train_len: int = 16
    gamma: float = 0.99
    tau: float = 0.005
    actor_lr: float = 3e-4
    critic_lr: float = 3e-4
    alpha_lr: float = 3e-4
    init_alpha: float = 0.2
    target_entropy: float | None = None  # None: -action_dim
    grad_clip: float = 1.0
    replay_capacity: int = 200_000
    device: str = "auto"  # auto: cuda when present, else cpu
    seed: int = 0
    # Where the target critics' recurrent history comes from: "online" reuses the online critics' (detached)
    # hidden states, so a target is one GRU step of the target weights; "target" runs the target critics over
    # the whole window first (one more pass of two GRUs over L steps, about a sixth of an update's work).
    target_history: str = "online"
    # Opt-in kickstarting (`sacbot.agent.teacher`): the weight of the distillation term
    # mean ||tanh(mu(s_t)) - teacher(s_t)||^2 added to the actor loss on the trained steps; 0 = off.
    kickstart: float = 0.0
    # Kickstart annealing: the weight falls linearly from `kickstart` to `kickstart_floor` between the
    # update counts `kickstart_anneal_from` and `kickstart_anneal` (the learner's own, kept in checkpoints,
    # so a resumed run goes on fading), and stays at the floor after; 0 = a constant weight.
    kickstart_anneal: int = 0
    kickstart_anneal_from: int = 0
    kickstart_floor: float = 0.0
    # Q-filtered kickstarting (Nair et al., 2018): the term counts only on the states where the critics rate
    # the teacher's action above the actor's own mean action (min of the twins), so the student leaves the
    # teacher wherever its critics say it does better, and keeps the teacher's action where they do not.
    kickstart_filter: bool = False
    # The term's weight on the movement entries (turn and speed) against the gun's (gun turn and fire):
    # 1 = the same; 0.2 with kickstart 50 holds the gun at 50 and the movement at 10.
    kickstart_movement: float = 1.0
    # The update from which `kickstart_movement` applies (the learner's own count, kept in checkpoints);
    # before it the movement's term weighs what the gun's does. 0: from the start.
    kickstart_movement_from: int = 0
    # Opt-in surfing teacher (`sacbot.agent.teacher.surf_movement`; needs the threat inputs): the teacher's
    # speed goes on, turns back or stops by where the enemy's bullets have hit us, while a wave of its is in
    # flight; off: the teacher orbits, reversing before walls only.
    teacher_surf: bool = False
    # Opt-in wave gun for the teacher (`sacbot.agent.teacher.teacher_action(wave_at=...)`; needs the wave
    # inputs): where the wave record is confident, the teacher aims at its most-weighted guess factor (a
    # GuessFactor gun) instead of linear targeting. Hindsight labels take its place where they are.
    teacher_gun: TeacherGun = "linear"
    # Opt-in self-imitation (CRR's binary filter, Wang et al. 2020): the weight of the term
    # mean keep * ||tanh(mu(s_t)) - a_t||^2 toward the replay's own actions a_t, kept only on the states
    # where the critics rate a_t above the actor's mean action (min of the twins). It pulls the policy toward
    # what the bot did and found better, at actions the critics were fitted on, never toward actions they
    # never saw scored; 0 = off.
    self_imitation: float = 0.0
    # Opt-in hindsight aim (`sacbot.agent.hindsight`): the weight of the term
    # mean w_t (tanh(mu(s_t))_gun - g_t)^2 + v_t (tanh(mu(s_t))_fire - f_t)^2 over the trained steps (|.|
    # in place of (.)^2 with `hindsight_distance = "absolute"`), found after the round from where the enemy
    # went: g_t the gun turn that would have put the shot fired next step on the enemy (w_t = 1 at such aiming
    # steps), f_t the teacher's power where the gun of s_t pointed where a shot would have hit, -1 where not
    # (v_t = 1 on cool-gun steps). With kickstarting on, the teacher's entries are left out where these
    # targets are. 0 = off.
    hindsight_aim: float = 0.0
    # How many steps before each shot carry a hindsight label (1: the aiming step alone; more: the gun's
    # turns before it too, each toward the same direction, `sacbot.agent.hindsight.hindsight_aim`).
    hindsight_steps: int = 1
    # The fire entry's hindsight term (the trigger label) at this share of `hindsight_aim` (1: the same
    # weight; 0: no trigger label, the teacher's fire entry asks for its power wherever the gun points).
    hindsight_trigger: float = 1.0
    # The distance the hindsight term takes from its labels: "squared" (their mean is the best single
    # target) or "absolute" (their median: where a bot dodges most shots one way, the aim follows the
    # larger share instead of falling between the two) or "hit" (the gun's alone: a Cauchy distance within
    # the enemy's half-width, `sacbot.agent.hindsight.hit_distance`, whose best target is the labels'
    # densest side, where a shot hits most often; the fire entry's stays squared).
    hindsight_distance: HindsightDistance = "squared"
    # Where the gun labels before the aiming step point (`hindsight_steps` > 1): "direction", the shot's
    # direction; "bearing", the enemy's bearing at each step plus the shot's offset from its bearing at the
    # aiming step (`sacbot.agent.hindsight`): where to point relative to the enemy, which a step long before
    # the shot can know, rather than where the enemy will be.
    hindsight_target: HindsightTarget = "direction"
    # n-step soft targets over the trained window (R2D2 uses 5): y_t = sum_{k<n} gamma^k r_{t+k}
    # + gamma^n V(s_{t+n}), cut at a terminal and at the window's end (fewer steps there); 1 = one-step SAC.
    n_step: int = 1
    # The share of each batch drawn from the fresh rounds alone: those stored after a kept replay was read
    # back (`SequenceReplay.sample`), so a real-time run against one opponent weighs its own games above the
    # kept ones from the first round on (near RLPD's symmetric sampling at 0.5); 0 = uniform over the replay.
    fresh_fraction: float = 0.0
    # The learner's first updates step the critics alone (the actor and the temperature held), so critics
    # started fresh under a trained actor (an actor archive's training start) learn its values before their
    # gradient moves it; counted in the learner's own updates (kept in checkpoints). 0: none.
    critic_warmup: int = 0
    # Opt-in anchor: the weight of the term mean ||tanh(mu(s_t)) - tanh(mu_0(s_t))||^2 over the trained steps
    # (the fire entry where the gun is cool), mu_0 the actor as it was at the learner's first update (a frozen
    # copy): fine-tuning a trained actor under critics that know little
    # yet keeps it near what it could do, where their gradient alone moved it off its play within a few
    # thousand updates; 0 = off.
    anchor: float = 0.0
    # The anchor term on the movement entries (turn, speed) times this, against the gun's: 0 holds the gun
    # and fire near the start's while the movement is free to move (1: the same weight).
    anchor_movement: float = 1.0
    arena_width: float = 800.0  # the teacher reads positions in these units (the 1v1 arena)
    arena_height: float = 600.0

    @property
    def window(self) -> int:
        return self.burn_in + self.train_len

    def entropy_target(self) -> float:
        return -float(self.sizes.action_dim) if self.target_entropy is None else self.target_entropy

    def kickstart_weight(self, updates: int) -> float:
        """The distillation term's weight at this update count (see `kickstart_anneal`)."""
        if self.kickstart_anneal <= 0:
            return self.kickstart
        span = self.kickstart_anneal - self.kickstart_anneal_from
        done = min(1.0, max(0.0, (updates - self.kickstart_anneal_from) / span))
        return self.kickstart + (self.kickstart_floor - self.kickstart) * done

    def movement_scale(self, updates: int) -> float:
        """The teacher's term on the movement entries against the gun's at this update count."""
        return self.kickstart_movement if updates >= self.kickstart_movement_from else 1.0

    def __post_init__(self) -> None:
        if not 1 <= self.n_step <= self.train_len:
            raise UserError(f"n_step must be 1 to {self.train_len} (the trained steps), not {self.n_step}", 2)
        if self.kickstart_anneal < 0:
            raise UserError("kickstart_anneal must be 0 (a constant weight) or more updates", 2)
        if self.kickstart_anneal == 0 and (self.kickstart_anneal_from or self.kickstart_floor):
            raise UserError("kickstart_anneal_from and kickstart_floor need kickstart_anneal (its end)", 2)
        if not 0 <= self.kickstart_anneal_from < max(1, self.kickstart_anneal):
            raise UserError(
                "kickstart_anneal_from must be 0 or more and below kickstart_anneal"
                f" ({self.kickstart_anneal}), not {self.kickstart_anneal_from}",
                2,
            )
        if not 0.0 <= self.kickstart_floor <= self.kickstart:
            raise UserError(
                f"kickstart_floor must be 0 to kickstart ({self.kickstart:g}), not {self.kickstart_floor}", 2
            )
        if not (self.kickstart_movement >= 0.0 and math.isfinite(self.kickstart_movement)):
            raise UserError(f"kickstart_movement must be 0 or more, not {self.kickstart_movement}", 2)
        if self.kickstart_movement_from < 0:
            raise UserError(
                f"kickstart_movement_from must be 0 or more, not {self.kickstart_movement_from}", 2
            )
        if self.kickstart_movement_from and self.kickstart_movement == 1.0:
            raise UserError("kickstart_movement_from needs kickstart_movement (the scale it switches to)", 2)
        if self.teacher_surf and not self.sizes.threat_inputs:
            raise UserError("teacher_surf needs the threat inputs (threat_inputs), which it reads", 2)
        if self.teacher_gun not in get_args(TeacherGun):
            choices = ", ".join(get_args(TeacherGun))
            raise UserError(f"teacher_gun must be one of {choices}, not {self.teacher_gun!r}", 2)
        if self.teacher_gun == "wave" and not self.sizes.wave_inputs:
            raise UserError("teacher_gun = wave needs the wave inputs (wave_inputs), which it reads", 2)
        if not (self.anchor >= 0.0 and math.isfinite(self.anchor)):
            raise UserError(f"anchor must be 0 (off) or more, not {self.anchor}", 2)
        if not (self.anchor_movement >= 0.0 and math.isfinite(self.anchor_movement)):
            raise UserError(f"anchor_movement must be 0 or more, not {self.anchor_movement}", 2)
        if self.critic_warmup < 0:
            raise UserError(f"critic_warmup must be 0 or more, not {self.critic_warmup}", 2)
        if not 0.0 <= self.fresh_fraction <= 1.0:
            raise UserError(f"fresh_fraction must be 0 to 1, not {self.fresh_fraction}", 2)
        if not (self.hindsight_aim >= 0.0 and math.isfinite(self.hindsight_aim)):
            raise UserError(f"hindsight_aim must be 0 (off) or more, not {self.hindsight_aim}", 2)
        if not 1 <= self.hindsight_steps <= self.train_len:
            raise UserError(f"hindsight_steps must be 1 to {self.train_len}, not {self.hindsight_steps}", 2)
        if not (self.hindsight_trigger >= 0.0 and math.isfinite(self.hindsight_trigger)):
            raise UserError(f"hindsight_trigger must be 0 (off) or more, not {self.hindsight_trigger}", 2)
        if self.hindsight_distance not in get_args(HindsightDistance):
            raise UserError(
                f"hindsight_distance must be 'squared', 'absolute' or 'hit', not {self.hindsight_distance!r}",
                2,
            )
        if self.hindsight_target not in get_args(HindsightTarget):
            raise UserError(
                f"hindsight_target must be 'direction' or 'bearing', not {self.hindsight_target!r}", 2
            )
        if not self.self_imitation >= 0.0:
            raise UserError(f"self_imitation must be 0 (off) or more, not {self.self_imitation}", 2)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        # A setting the user chose (SACBOT_DEVICE=cuda): one clear line, not torch's assertion traceback.
        raise UserError(f"device {name!r} was asked for, but torch sees no CUDA device (use cpu or auto)", 2)
    return torch.device(name)
