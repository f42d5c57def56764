"""Hindsight aim: after a round, the gun turn that would have put each shot on the enemy, and whether the
gun, wherever it was cool, pointed where a shot would have hit.

A shot's direction is decided one step before the shot: the bullet of the intent a_t leaves from the pre-move
position of s_t along the pre-turn gun heading of s_t (`sacbot.engine.guns`), and that heading is s_{t-1}'s
turned by the gun entry of a_{t-1} (20 degrees a turn at most, the gun turning on its own). Once the round is
over, the states after a step say where the enemy went, so the direction in which a bullet leaving at that
step would have hit is known: toward the enemy's position at the first turn k >= 1 at which the bullet's
reach, speed * (k + 1) (the far end of the segment the server tests in that turn), gets to it. Two labels
follow (`LABEL_DIM` = 4 numbers a step: gun target, gun weight, fire target, fire weight):

- Gun: at the aiming step t - 1 before each shot a_t, the turn onto the shot's direction,
  clip(wrap(direction - gun heading of s_{t-1}) / 20, -1, 1). With `steps` > 1 the steps before it too, each
  toward a point that `target` names: "direction", the shot's direction itself; "bearing", the enemy's
  bearing at that step plus the shot's offset from the enemy's bearing at the aiming step, mirrored where the
  enemy's sideways motion then ran the other way (a GuessFactor's sense: where to point relative to the
  enemy, which a step 16 turns before the shot can know, rather than where the enemy will be then, which it
  cannot). At the aiming step the two are the same. With `gun_offset` (`NetworkSizes.gun_offset`: the gun
  entry is where the gun points, not how it turns) each label is that point's offset from the enemy's
  bearing at its step instead, clip(wrap(point - bearing) / 45, -1, 1), and stays the turn where no enemy
  was seen yet (the action's meaning there).
- Fire: at every step u whose gun is cool, for a bullet of the teacher's power there (by distance and energy,
  `sacbot.agent.teacher`): the teacher's fire entry against that bullet's hit direction instead of its own
  aim (`teacher.fire_entry`): power / 3 where the gun of s_u pointed within the enemy's half-width (18 units)
  of it, down to -1 (hold fire) at three half-widths.

Everything is read from the stored states (`sacbot.agent.features`): a shot at t shows as a cool gun in s_t
and a hot one in s_{t+1} (heat 1 + power / 5 after a shot; nothing else heats a gun), which gives the power
and so the bullet's speed 20 - 3 * power; the enemy's position is our own plus its distance and bearing. A
state without an enemy seen (UNSEEN_ENEMY: before the first scan, after it died) keeps the last seen position.
No label where the round ended before the bullet could reach the enemy, or no enemy was seen yet.

The trainer's opt-in term (`TrainerConfig.hindsight_aim`) pulls the actor's mean gun turn and fire entry
toward them: an aim, and a trigger, learnt from where the enemy actually went (its dodges included), not from
a model of it. The sequence replay labels each round as it closes (`SequenceReplay(relabel=...)`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from sacbot.agent.features import (
    BOT_DIAMETER,
    GUN_OFFSET_RANGE,
    MAX_GUN_HEAT,
    MAX_GUN_TURN_RATE,
    STATE_DIM,
    UNSEEN_ENEMY,
    bullet_speed,
)
from sacbot.agent.options import HindsightTarget
from sacbot.agent.teacher import fire_entry, teacher_action

# How many turns after a shot the search looks (a power-3 bullet, 11 units a turn, crosses the 1,000-unit
# diagonal of the 800 x 600 arena in 91).
HORIZON = 100
LABEL_DIM = 4  # per step: the gun entry's target and weight (1 where it has one), the fire entry's the same


def _hit_directions(
    x: np.ndarray,
    y: np.ndarray,
    ex: np.ndarray,
    ey: np.ndarray,
    known: np.ndarray,
    starts: np.ndarray,
    speed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For bullets leaving from our position at each step of `starts` at `speed`: whether the enemy's path
    (ex, ey; `known` where seen) is reached within the round, the direction (degrees) that would have hit,
    and the distance to the enemy there."""
    t_len = len(x) - 1
    k = np.arange(1, HORIZON + 1)
    j = starts[:, None] + k[None, :]  # (starts, K): the states after each start
    inside = j <= t_len
    j = np.minimum(j, t_len)
    ox, oy = x[starts][:, None], y[starts][:, None]
    d = np.hypot(ex[j] - ox, ey[j] - oy)
    reached = inside & known[j] & (speed[:, None] * (k[None, :] + 1) >= d)
    rows = np.arange(len(starts))
    first = np.argmax(reached, axis=1)
    at = j[rows, first]
    direction = np.degrees(np.arctan2(ey[at] - oy[:, 0], ex[at] - ox[:, 0]))
    return reached.any(axis=1), direction, d[rows, first]


def hindsight_aim(
    obs: np.ndarray,
    arena_width: float = 800.0,
    arena_height: float = 600.0,
    steps: int = 1,
    target: HindsightTarget = "direction",
    gun_offset: bool = False,
) -> np.ndarray:
    """(T, LABEL_DIM) float32 for one round's states s_0..s_T (obs (T+1, >= 17)): per step, the gun entry's
    hindsight target and weight (1 at the aiming step before each shot that has one, 0 elsewhere) and the
    fire entry's (1 on each cool-gun step that has one). With `steps` > 1 the `steps` steps before each shot
    carry a gun label, each with the turn from its own gun heading toward the point `target` names (the
    shot's direction, or the enemy's bearing then plus the shot's offset from it); a step before two shots
    takes the nearer one's. `gun_offset`: the gun labels as offsets from the enemy's bearing at their step
    (the gun entry's meaning with `NetworkSizes.gun_offset`) where it was seen."""
    t_len = len(obs) - 1
    out = np.zeros((max(t_len, 0), LABEL_DIM), np.float32)
    if t_len < 1:
        return out
    s = np.asarray(obs[:, :STATE_DIM], np.float64)
    heat = s[:, 6]
    x, y = s[:, 0] * arena_width, s[:, 1] * arena_height
    toward = np.deg2rad((s[:, 2] + s[:, 13]) * 180.0)
    dist = s[:, 12] * math.hypot(arena_width, arena_height)
    ex, ey = x + dist * np.cos(toward), y + dist * np.sin(toward)
    seen = ~np.all(s[:, 12:17] == np.asarray(UNSEEN_ENEMY), axis=1)
    last = np.maximum.accumulate(np.where(seen, np.arange(t_len + 1), -1))  # the last seen state, or -1
    known = last >= 0
    held = np.maximum(last, 0)  # each step's last seen state (the first where none is yet)
    ex, ey = ex[held], ey[held]

    # Gun: the shots a_t, t in 1..T-1 (a cool gun in s_t, a hot one in s_{t+1}), at their own power.
    shots = np.flatnonzero((heat[1:t_len] <= 0.0) & (heat[2:] > 0.0)) + 1
    if len(shots):
        power = (heat[shots + 1] * MAX_GUN_HEAT - 1.0) * 5.0
        has, direction, _ = _hit_directions(x, y, ex, ey, known, shots, bullet_speed(power))
        shots, direction = shots[has], direction[has]
        bearing = np.degrees(np.arctan2(ey - y, ex - x))  # the enemy's (last seen) bearing at every step
        if target == "bearing":  # ... and its sideways sense
            sideways = np.sign(s[held, 15] * np.sin(np.deg2rad(s[held, 14] * 180.0 - bearing)))
            offset = (direction - bearing[shots - 1] + 180.0) % 360.0 - 180.0
            aim_side = sideways[shots - 1]  # ... at each shot's aiming step
        for lead in range(steps, 0, -1):  # the nearest steps last: they overwrite a later shot's far ones
            ok = shots - lead >= 0
            aim = shots[ok] - lead
            point = direction[ok]
            if target == "bearing":
                flip = np.where(sideways[aim] * aim_side[ok] < 0.0, -1.0, 1.0)
                point = bearing[aim] + flip * offset[ok]
            label = np.clip(((point - s[aim, 4] * 180.0 + 180.0) % 360.0 - 180.0) / MAX_GUN_TURN_RATE, -1, 1)
            if gun_offset:  # the point's offset from the bearing, where there is one
                off = np.clip(((point - bearing[aim] + 180.0) % 360.0 - 180.0) / GUN_OFFSET_RANGE, -1, 1)
                label = np.where(seen[aim], off, label)
            out[aim, 0] = label
            out[aim, 1] = 1.0

    # Fire: every cool-gun step, for a bullet of the teacher's power from there.
    cool = np.flatnonzero((heat[:t_len] <= 0.0) & seen[:t_len])
    if len(cool):
        taught = teacher_action(torch.from_numpy(obs[cool, :STATE_DIM]), arena_width, arena_height, False)
        power = taught[:, 3].double().numpy() * 3.0
        has, direction, d = _hit_directions(x, y, ex, ey, known, cool, bullet_speed(power))
        off = np.radians((direction - s[cool, 4] * 180.0 + 180.0) % 360.0 - 180.0)
        tolerance = np.arctan2(BOT_DIAMETER / 2.0, np.maximum(d, 1.0))
        fire = fire_entry(*(torch.from_numpy(a) for a in (power, off, tolerance))).numpy()
        out[cool[has], 2] = fire[has]
        out[cool[has], 3] = 1.0
    return out


def hit_distance(
    gap: torch.Tensor, states: torch.Tensor, arena_width: float, arena_height: float, gun_offset: bool = False
) -> torch.Tensor:
    """The gun term's distance with `hindsight_distance = "hit"`: w^2 log(1 + (gap / w)^2) for a gap
    between the gun entry and its label (in gun-entry units: 20 degrees, 45 with `gun_offset`), w the
    angle the enemy's half-width (18 units) spans at its distance in each step's state, in the same units.
    Within w of the label it is about the squared distance; beyond it grows only as a logarithm, so a label
    pulls the gun (the gradient) by at most w, where the squared distance pulls by twice the gap. The Cauchy
    (Lorentzian) loss: its best single target over labels that split between two sides is the denser
    side's centre (a shot there hits that share), not the gap between them (which hits neither), as a
    GuessFactor gun fires at its densest factor."""
    distance = (states[..., 12] * math.hypot(arena_width, arena_height)).clamp(min=BOT_DIAMETER / 2.0)
    unit = GUN_OFFSET_RANGE if gun_offset else MAX_GUN_TURN_RATE
    width = torch.rad2deg(torch.atan2(torch.full_like(distance, BOT_DIAMETER / 2.0), distance)) / unit
    return width.square() * torch.log1p((gap / width).square())


__all__ = ["HORIZON", "LABEL_DIM", "hindsight_aim", "hit_distance"]
