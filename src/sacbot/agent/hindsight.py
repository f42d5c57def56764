"""Hindsight aim: after a round, the gun turn that would have put each shot on the enemy.

A shot's direction is decided one step before the shot: the bullet of the intent a_t leaves from the pre-move
position of s_t along the pre-turn gun heading of s_t (`sacbot.engine.guns`), and that heading is s_{t-1}'s
turned by the gun entry of a_{t-1} (20 degrees a turn at most, the gun turning on its own). Once the round is
over, the states after the shot say where the enemy went, so the direction that would have hit is known: the
enemy's position at the first turn k >= 1 after the shot at which the bullet's reach, speed * (k + 1) (the far
end of the segment the server tests in that turn), gets to it. That direction is the hindsight target of the
gun entry at the aiming step t - 1:

    target_{t-1} = clip(wrap(direction - gun heading of s_{t-1}) / 20, -1, 1).

Everything is read from the stored states (`sacbot.agent.features`): a shot at t shows as a cool gun in s_t
and a hot one in s_{t+1} (heat 1 + power / 5 after a shot; nothing else heats a gun), which gives the power
and so the bullet's speed 20 - 3 * power; the enemy's position is our own plus its distance and bearing. A
state without an enemy seen (UNSEEN_ENEMY: before the first scan, after it died) keeps the last seen position.
No target where the round ended before the bullet could reach the enemy, or no enemy was seen yet.

The trainer's opt-in term (`TrainerConfig.hindsight_aim`) pulls the actor's mean gun turn at each aiming step
toward its target: an aim learnt from where the enemy actually went (its dodges included), not from a model of
it. The sequence replay labels each round as it closes (`SequenceReplay(relabel=...)`).
"""

from __future__ import annotations

import math

import numpy as np

from sacbot.agent.features import MAX_GUN_HEAT, MAX_GUN_TURN_RATE, STATE_DIM, UNSEEN_ENEMY

# How many turns after a shot the search looks (a power-3 bullet, 11 units a turn, crosses the 1,000-unit
# diagonal of the 800 x 600 arena in 91).
HORIZON = 100
LABEL_DIM = 2  # per step: the gun entry's target, and 1 where the step has one (0 elsewhere)


def hindsight_aim(
    obs: np.ndarray, arena_width: float = 800.0, arena_height: float = 600.0, steps: int = 1
) -> np.ndarray:
    """(T, 2) float32 for one round's states s_0..s_T (obs (T+1, >= 17)): per step, the hindsight target of
    the gun entry and its weight, 1 at the aiming step before each shot that has one, 0 elsewhere. With
    `steps` > 1 the `steps` steps before each shot are labelled, each with the turn from its own gun heading
    toward the same direction (a gun that follows them is on it by the shot); a step before two shots takes
    the nearer one's."""
    t_len = len(obs) - 1
    out = np.zeros((max(t_len, 0), LABEL_DIM), np.float32)
    if t_len < 2:
        return out
    s = np.asarray(obs[:, :STATE_DIM], np.float64)
    heat = s[:, 6]
    shots = np.flatnonzero((heat[1:t_len] <= 0.0) & (heat[2:] > 0.0)) + 1  # t in 1..T-1: a_t fired
    if len(shots) == 0:
        return out
    x, y = s[:, 0] * arena_width, s[:, 1] * arena_height
    toward = np.deg2rad((s[:, 2] + s[:, 13]) * 180.0)
    dist = s[:, 12] * math.hypot(arena_width, arena_height)
    ex, ey = x + dist * np.cos(toward), y + dist * np.sin(toward)
    seen = ~np.all(s[:, 12:17] == np.asarray(UNSEEN_ENEMY), axis=1)
    last = np.maximum.accumulate(np.where(seen, np.arange(t_len + 1), -1))  # the last seen state, or -1
    known = last >= 0
    ex, ey = ex[np.maximum(last, 0)], ey[np.maximum(last, 0)]

    power = (heat[shots + 1] * MAX_GUN_HEAT - 1.0) * 5.0
    speed = 20.0 - 3.0 * power
    k = np.arange(1, HORIZON + 1)
    j = shots[:, None] + k[None, :]  # (shots, K): the states after each shot
    inside = j <= t_len
    j = np.minimum(j, t_len)
    ox, oy = x[shots][:, None], y[shots][:, None]
    d = np.hypot(ex[j] - ox, ey[j] - oy)
    reached = inside & known[j] & (speed[:, None] * (k[None, :] + 1) >= d)
    has = reached.any(axis=1)
    first = np.argmax(reached, axis=1)
    hit_j = j[np.arange(len(shots)), first]
    direction = np.degrees(np.arctan2(ey[hit_j] - oy[:, 0], ex[hit_j] - ox[:, 0]))
    shots, direction = shots[has], direction[has]
    for lead in range(steps, 0, -1):  # the nearest steps last: they overwrite a later shot's far ones
        ok = shots - lead >= 0
        aim = shots[ok] - lead
        turn = (direction[ok] - s[aim, 4] * 180.0 + 180.0) % 360.0 - 180.0
        out[aim, 0] = np.clip(turn / MAX_GUN_TURN_RATE, -1.0, 1.0)
        out[aim, 1] = 1.0
    return out


__all__ = ["HORIZON", "LABEL_DIM", "hindsight_aim"]
