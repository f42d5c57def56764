"""A scripted teacher for kickstarting: an action in [-1, 1]^4 for any state, a pure function of the state.

Kickstarting (Schmitt et al., 2018) adds to the actor's SAC loss a distillation term toward a teacher, with a
weight that a trainer lowers (or keeps) as the student learns; the states come from the student's own play,
so the teacher labels exactly the situations the student gets itself into (as DAgger does). The teacher here
reads nothing but the state vector of `sacbot.agent.features`, so what it does is something the actor can
represent:

- Gun: linear targeting. The remembered enemy position (distance and bearing), heading and speed give where it
  will be when a bullet of the chosen power gets there (a few fixed-point iterations, clamped to the arena);
  the gun turns toward that point, and it fires when the gun already points within about half a bot width
  of it (bullets leave along the pre-turn gun heading). Power 3 near, 2 mid-range, 1 far, less when low on
  energy (misses cost energy: a bot that sprays itself empty loses to one that barely shoots).
- Body: full speed across the line to the enemy, tilted to hold about 200 away, keeping the travel
  direction it has (read from the body heading and the sign of the speed) until the wall ahead is near, then
  reversing; forward or backward, whichever needs less turning. Head-on aim (what most classic bots use)
  falls behind a tank that keeps moving across it.
- Before the first scan: the gun spins and the body waits (the lock radar sweeps meanwhile).

Opt-in surfing movement (`surf_movement`, `TrainerConfig.teacher_surf`): with the threat inputs on, while an
enemy wave is in flight and its bullets have hit us before, the speed goes on, turns back or stops, whichever
puts us where the hits have been fewest when the wave arrives (what a wave-surfing Robocode bot does). It
reads a sequence of observations, not one state: which way our guess factor grows comes from how it changed
since the step before.

Everything is batched torch maths on (..., 17) tensors, so a trainer applies it to a replay batch at once.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from sacbot.agent.features import (
    BOT_DIAMETER,
    FULL_ENERGY,
    GUN_OFFSET_RANGE,
    MAX_FIREPOWER,
    MAX_GUN_TURN_RATE,
    MAX_SPEED,
    THREAT_HORIZON,
    UNSEEN_ENEMY,
    bullet_speed,
    linear_aim,
    wrap_rad,
)
from sacbot.agent.sizes import WAVE_BINS

PREFERRED_DISTANCE = 200.0
WALL_MARGIN = 60.0
LOOKAHEAD = 90.0  # how far ahead along the travel direction the wall check looks


def fire_entry(power: Tensor, off: Tensor, tolerance: Tensor) -> Tensor:
    """The fire entry for a shot of `power` with the gun `off` its aim by an angle, `tolerance` the angle a
    hit allows: power / 3 within the tolerance, then a ramp down to -1 (hold fire) at three tolerances: a
    regression target a student can fit (a step is not); the shot goes off while the ramp is above the 0.1
    threshold."""
    beyond = torch.clamp((off.abs() - tolerance) / (2.0 * tolerance), min=0.0)
    return torch.clamp(power / 3.0 - beyond * (power / 3.0 + 1.0), min=-1.0)


def teacher_action(
    obs: Tensor,
    arena_width: float = 800.0,
    arena_height: float = 600.0,
    aimed_fire: bool = True,
    gun_offset: bool = False,
    wave_at: int = -1,
) -> Tensor:
    """The teacher's action for each state of `obs` (..., 17 or more): a tensor (..., 4) in [-1, 1].
    `aimed_fire` False: the fire entry asks for the power wherever the gun points (for a gun that follows
    another aim, the trainer's hindsight aim), not only near the teacher's own aim. `gun_offset`: the gun
    entry as the aim's offset from the enemy's bearing (`NetworkSizes.gun_offset`) instead of the turn onto
    it. `wave_at` (the column where obs's wave inputs start; -1: none, `TrainerConfig.teacher_gun`): where
    their record holds a wave, the gun aims at its most-weighted guess factor, that share of the bullet's
    largest escape angle from the enemy's bearing on the side it moves to now (a GuessFactor gun), not by
    linear targeting; the power stays the linear aim's."""
    w, h = arena_width, arena_height
    diagonal = math.hypot(w, h)
    x, y = obs[..., 0] * w, obs[..., 1] * h
    body = obs[..., 2] * math.pi
    speed = obs[..., 3] * MAX_SPEED
    gun = obs[..., 4] * math.pi
    energy = obs[..., 7] * FULL_ENERGY
    dist = obs[..., 12] * diagonal
    bearing = body + obs[..., 13] * math.pi
    e_heading = obs[..., 14] * math.pi
    e_speed = obs[..., 15] * MAX_SPEED
    unseen = torch.ones_like(x, dtype=torch.bool)
    for i, v in enumerate(UNSEEN_ENEMY):
        unseen = unseen & (obs[..., 12 + i] == v)

    # Gun: linear targeting with power by distance.
    aim, power, reach = linear_aim(torch, x, y, dist, bearing, e_heading, e_speed, energy, w, h)
    if wave_at >= 0:  # the wave inputs: 0 the record's confidence, 11 its peak turned to the enemy's side
        recorded = obs[..., wave_at] > 0.0
        peak = bearing + obs[..., wave_at + 11] * torch.asin(MAX_SPEED / bullet_speed(power))
        aim, reach = torch.where(recorded, peak, aim), torch.where(recorded, dist, reach)
    gun_error = wrap_rad(aim - gun)
    half = BOT_DIAMETER / 2.0
    tolerance = torch.atan2(torch.full_like(dist, half), torch.clamp(reach, min=1.0))
    a_fire = fire_entry(power, gun_error, tolerance) if aimed_fire else power / 3.0  # a hot gun ignores it
    if gun_offset:
        a_gun = torch.clamp(torch.rad2deg(wrap_rad(aim - bearing)) / GUN_OFFSET_RANGE, -1.0, 1.0)
    else:
        a_gun = torch.clamp(torch.rad2deg(gun_error) / MAX_GUN_TURN_RATE, -1.0, 1.0)

    # Body: across the line to the enemy, tilted toward the preferred distance, reversing before walls.
    tilt = torch.clamp((dist - PREFERRED_DISTANCE) / PREFERRED_DISTANCE, -0.5, 0.5) * (math.pi / 4.0)
    travel = torch.where(speed < 0.0, body + math.pi, body)
    left, right = bearing + (math.pi / 2.0 - tilt), bearing - (math.pi / 2.0 - tilt)
    keep_left = wrap_rad(left - travel).abs() <= wrap_rad(right - travel).abs()
    first = torch.where(keep_left, left, right)
    second = torch.where(keep_left, right, left)

    def clear(direction: Tensor) -> Tensor:
        ax, ay = x + LOOKAHEAD * torch.cos(direction), y + LOOKAHEAD * torch.sin(direction)
        return (ax > WALL_MARGIN) & (ax < w - WALL_MARGIN) & (ay > WALL_MARGIN) & (ay < h - WALL_MARGIN)

    to_centre = torch.atan2(h / 2.0 - y, w / 2.0 - x)
    move = torch.where(clear(first), first, torch.where(clear(second), second, to_centre))
    forward = wrap_rad(move - body).abs() <= math.pi / 2.0
    facing = torch.where(forward, move, move + math.pi)
    a_turn = torch.clamp(torch.rad2deg(wrap_rad(facing - body)) / 10.0, -1.0, 1.0)
    a_speed = torch.where(forward, 1.0, -1.0)

    zeros = torch.zeros_like(x)
    action = torch.stack(
        [
            torch.where(unseen, zeros, a_turn),
            torch.where(unseen, zeros, a_speed),
            torch.where(unseen, torch.ones_like(x), a_gun),
            torch.where(unseen, torch.full_like(x, -1.0), a_fire),
        ],
        -1,
    )
    return action.to(obs.dtype)


def distillation_loss(
    action_mean: Tensor,
    obs: Tensor,
    arena_width: float = 800.0,
    arena_height: float = 600.0,
    keep: Tensor | None = None,
    target: Tensor | None = None,
    movement: float = 1.0,
    entries: Tensor | None = None,
) -> Tensor:
    """Mean over states of ||action_mean - teacher(obs)||^2, the fire entry counted only where the gun is cool
    (a hot gun ignores the request, so there the student may ask anything). `keep` (0/1 per state, the
    shape of obs without its last axis) zeroes the term on the states it leaves out (the Q-filter); the mean
    stays over all states, so the term shrinks as fewer states keep it. `target`: the actions to pull toward
    when not the teacher's on obs (the teacher's when the caller has them already; the trainer's
    self-imitation passes the replay's own). `movement` scales the movement entries (turn and speed)
    against the gun's (gun turn and fire). `entries` (the shape of the actions) weighs each entry on each
    state (the trainer's hindsight aim leaves out the entries it has targets of its own for)."""
    with torch.no_grad():
        if target is None:
            target = teacher_action(obs, arena_width, arena_height)
        weight = torch.ones_like(target)
        weight[..., 3] = (obs[..., 6] <= 0.0).to(weight.dtype)
        if movement != 1.0:
            weight[..., :2] = movement
        if entries is not None:
            weight = weight * entries
    per_state = ((action_mean - target).pow(2) * weight).sum(-1)
    if keep is not None:
        per_state = per_state * keep
    return per_state.mean()


def surf_movement(
    obs: Tensor, base: Tensor, threat_at: int, arena_width: float = 800.0, arena_height: float = 600.0
) -> Tensor:
    """The surfing teacher's movement (turn, speed) for a time-major sequence of observations `obs` (L, B, D)
    whose threat inputs start at `threat_at`, over `base`, the teacher's movement on them (L, B, 2).

    Where the nearest enemy wave is in flight, its bullets have hit us this game and the direction our guess
    factor grows in is known, the speed entry is replaced: for going on at full speed, turning back and
    stopping, our speed is stepped (speeding up 1 a turn, braking 2) for the turns until the wave arrives,
    the sideways distance it covers about the enemy turned into a guess factor on the wave, and the option
    whose factor lands where the hit histogram (neighbours at half weight) is lowest is taken (ties: going
    on; with `NetworkSizes.threat_visits` the shares also mix in where we were as the enemy's waves passed,
    so the lowest is also where we have been least). The direction is the sign of the factor's change since
    the step before, against our sideways speed, taken on steps that follow the same wave and kept while it
    lasts (unknown at the sequence's first step and at each new wave until we move). The turn is `base`'s.
    """
    th = obs[..., threat_at : threat_at + 6 + WAVE_BINS]
    has_wave, has_hits = th[..., 0] > 0.0, th[..., 4] > 0.0
    left, factor = th[..., 1] * THREAT_HORIZON, th[..., 2]
    power = torch.clamp(th[..., 3] * MAX_FIREPOWER, min=0.1)
    hist = th[..., 5 : 5 + WAVE_BINS]
    body = obs[..., 2] * math.pi
    speed = obs[..., 3] * MAX_SPEED
    away = body + obs[..., 13] * math.pi + math.pi  # from the enemy (where its waves start) to us
    distance = torch.clamp(obs[..., 12] * math.hypot(arena_width, arena_height), min=50.0)
    sideways = torch.sin(body - away)  # our sideways speed about the enemy per unit of speed
    lateral = speed * sideways

    # Which way the factor grows: the sign of its change against our sideways speed, along one wave.
    sign = torch.zeros_like(factor)
    for t in range(1, obs.shape[0]):
        same = has_wave[t] & has_wave[t - 1] & ((left[t - 1] - left[t] - 1.0).abs() < 3.0)
        change = factor[t] - factor[t - 1]
        seen = same & (lateral[t].abs() > 0.5) & (change.abs() > 1e-4)
        kept = torch.where(same, sign[t - 1], torch.zeros_like(sign[t - 1]))
        sign[t] = torch.where(seen, torch.sign(change * lateral[t]), kept)

    go = torch.where(speed.abs() > 0.5, torch.sign(speed), torch.where(base[..., 1] >= 0.0, 1.0, -1.0))
    targets = torch.stack([go * MAX_SPEED, -go * MAX_SPEED, torch.zeros_like(go)], -1)  # (L, B, 3)
    v = speed.unsqueeze(-1).expand_as(targets)
    covered = torch.zeros_like(targets)
    for k in range(int(THREAT_HORIZON)):
        toward = targets - v
        step = torch.where(v * toward < 0.0, 2.0, 1.0)  # braking is 2 a turn, speeding up 1
        v = v + torch.maximum(torch.minimum(toward, step), -step)
        covered = covered + v * (k < left).unsqueeze(-1)
    escape = torch.asin(MAX_SPEED / bullet_speed(power))
    arrival = factor.unsqueeze(-1) + (sign * sideways / distance / escape).unsqueeze(-1) * covered
    bins = torch.clamp(((arrival.clamp(-1.0, 1.0) + 1.0) * WAVE_BINS / 2.0).long(), max=WAVE_BINS - 1)
    padded = torch.nn.functional.pad(hist, (1, 1))
    danger = padded.gather(-1, bins + 1) + 0.5 * padded.gather(-1, bins) + 0.5 * padded.gather(-1, bins + 2)
    choice = danger.argmin(-1, keepdim=True)  # the first of equals: going on
    surfed = targets.gather(-1, choice).squeeze(-1) / MAX_SPEED
    active = has_wave & has_hits & (sign != 0.0)
    return torch.stack([base[..., 0], torch.where(active, surfed, base[..., 1])], -1)


__all__ = ["distillation_loss", "fire_entry", "surf_movement", "teacher_action"]
