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
    MAX_GUN_TURN_RATE,
    MAX_SPEED,
    UNSEEN_ENEMY,
    linear_aim,
    wrap_rad,
)

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
) -> Tensor:
    """The teacher's action for each state of `obs` (..., 17): a tensor (..., 4) in [-1, 1]. `aimed_fire`
    False: the fire entry asks for the power wherever the gun points (for a gun that follows another aim,
    the trainer's hindsight aim), not only near the teacher's own aim. `gun_offset`: the gun entry as the
    aim's offset from the enemy's bearing (`NetworkSizes.gun_offset`) instead of the turn onto it."""
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


__all__ = ["distillation_loss", "fire_entry", "teacher_action"]
