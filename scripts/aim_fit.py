"""How near a run's aim is to the hindsight aim (docs/learning.md, "Hindsight aim").

    python scripts/aim_fit.py RUN_FOLDER [OPPONENTS] [--rounds 20] [--modes] [--turns] [--targets 16]

Plays `--rounds` in-process rounds of the run folder's `latest.zip` (its mean, as `sacbot eval` plays) against
each of OPPONENTS (comma-separated; Orbiter,StopGo,Surfer by default), labels them as the trainer does
(`sacbot.agent.hindsight.hindsight_aim`) and prints per opponent: the shots fired and the share that hit, the
enemy's shots and the share that hit us (how well the bot dodges), and over the labelled aiming steps the
median distance, in degrees, of the gun turn played (the mean's) from the label, of the teacher's linear aim
from it on the same states, and the share of steps where the played turn lay within a bot's half-width (18
units) of the label at that shot's distance.

With `--modes` it also prints where the labels lie: the label minus the teacher's linear aim, in degrees,
signed so that negative is back against the enemy's sideways motion at the aiming step (a bot that reverses
when it sees a shot puts its labels there), counted in 4-degree bins from -40 to +40 (steps where the enemy
moved straight toward or away from us left out); and the same for the gun turn played.

With `--turns` it also prints the gun turns themselves on those steps, signed the same way (positive: along
the enemy's sideways motion), in 4-degree bins from -20 to +20: the one played, the teacher's linear aim's
and the label's. A gun that follows the enemy some way behind plays small turns where the teacher's asks
for large ones, so these tell where the gun points from how far it turns.

With `--targets M` it also labels the M steps before each shot as the trainer does with `hindsight_steps = M`,
once per `hindsight_target` ("direction" and "bearing"), and prints how well simple aims predict those labels:
the mean squared distance, in gun-entry units, of each from the labels: the gun entry played, no turn at all,
the teacher's linear aim, the turn onto the enemy (head-on), and head-on plus the single offset along the
enemy's sideways motion (whole degrees, -30 to 30) that fits best. Where none of these lies much nearer the
labels than no turn, a squared loss has little but their centre, a small turn, to learn.

A run whose gun entry is an offset from the enemy's bearing (`gun_offset`) is played so, and its gun entries
and labels are compared as the turns they ask for, so the figures read the same for both kinds of run.
"""

from __future__ import annotations

import argparse
import math
from typing import get_args

import numpy as np
import torch
from shot_q import Round, load_run, play  # this folder's: run as `python scripts/aim_fit.py`

from sacbot.agent.features import GUN_OFFSET_RANGE, MAX_GUN_TURN_RATE, STATE_DIM, UNSEEN_ENEMY
from sacbot.agent.hindsight import hindsight_aim
from sacbot.agent.inference import FastActor
from sacbot.agent.options import HindsightTarget
from sacbot.agent.teacher import teacher_action

DIAGONAL = math.hypot(800.0, 600.0)


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("run")
    parser.add_argument("opponents", nargs="?", default="Orbiter,StopGo,Surfer")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--modes", action="store_true", help="the labels about the linear aim too")
    parser.add_argument("--turns", action="store_true", help="the gun turns played, taught and labelled")
    parser.add_argument("--targets", type=int, default=0, help="how well simple aims predict M-step labels")
    args = parser.parse_args()
    trainer = load_run(args.run)
    sizes = trainer.config.sizes
    actor = FastActor(trainer.actor_arrays(), sizes)
    print(
        f"{args.run}: {'opponent':10} shots  hit   labelled  |played-label|  |teacher-label|  within"
        "  their shots  hit us"
    )
    for opponent in args.opponents.split(","):
        rounds = play(actor, sizes, opponent, args.rounds)
        shots = sum(len(r.fired) for r in rounds)
        hits = sum(len(r.hits) for r in rounds)
        theirs, hit_us = sum(r.enemy_shots for r in rounds), sum(r.enemy_hits for r in rounds)
        played, taught, within, signed, aimed = [], [], [], [], []
        turns: dict[str, list[np.ndarray]] = {"played": [], "teacher's": [], "label": []}
        for r in rounds:
            labels = hindsight_aim(r.states)
            steps = np.flatnonzero(labels[:, 1])
            if not len(steps):
                continue
            state = r.states[steps, : sizes.state_dim]
            gun = turn_asked(state, r.actions[steps, 2], sizes.gun_offset)
            err = np.abs(gun - labels[steps, 0]) * MAX_GUN_TURN_RATE
            teacher = teacher_action(torch.from_numpy(state)).numpy()[:, 2]
            played.append(err)
            taught.append(np.abs(teacher - labels[steps, 0]) * MAX_GUN_TURN_RATE)
            half = np.degrees(np.arctan2(18.0, np.maximum(state[:, 12] * DIAGONAL, 1.0)))
            within.append(err < half)
            _, sideways = enemy_frame(state)
            moving = np.abs(sideways) > 1e-3
            side = MAX_GUN_TURN_RATE * np.sign(sideways)
            signed.append(((labels[steps, 0] - teacher) * side)[moving])
            aimed.append(((gun - teacher) * side)[moving])
            turns["played"].append((gun * side)[moving])
            turns["teacher's"].append((teacher * side)[moving])
            turns["label"].append((labels[steps, 0] * side)[moving])
        p, t, w = (np.concatenate(x) for x in (played, taught, within))
        head = f"{args.run}: {opponent:10}"
        print(
            f"{head} {shots:5d} {hits / max(shots, 1):5.2f} {len(p):9d}"
            f" {np.median(p):14.2f} {np.median(t):16.2f} {w.mean():7.2f}"
            f" {theirs:12d} {hit_us / max(theirs, 1):7.2f}"
        )
        for what, offsets in (("label", signed), ("played", aimed)) if args.modes else ():
            s = np.concatenate(offsets)
            counts, _ = np.histogram(np.clip(s, -40.0, 40.0 - 1e-6), bins=20, range=(-40.0, 40.0))
            print(f"{head} {what} - linear aim, 4-degree bins from -40 (median {np.median(s):.1f}):")
            print(f"{head} {' '.join(str(c) for c in counts)}")
        for what, turned in turns.items() if args.turns else ():
            s = np.concatenate(turned)
            counts, _ = np.histogram(np.clip(s, -20.0, 20.0 - 1e-6), bins=10, range=(-20.0, 20.0))
            print(f"{head} {what} gun turn, 4-degree bins from -20 (mean {s.mean():.1f}):")
            print(f"{head} {' '.join(str(c) for c in counts)}")
        for target in get_args(HindsightTarget) if args.targets else ():
            print(f"{head} {predictors(rounds, args.targets, target, sizes.gun_offset)}")


def enemy_frame(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The enemy's bearing from us in degrees, and its sideways speed (+ when that bearing grows,
    counter-clockwise), for states (N, >= 17)."""
    bearing = (state[:, 2] + state[:, 13]) * 180.0
    return bearing, state[:, 15] * np.sin(np.deg2rad(state[:, 14] * 180.0 - bearing))


def turn_asked(state: np.ndarray, entry: np.ndarray, gun_offset: bool) -> np.ndarray:
    """The gun entries played on states (N, >= 17) as the turns they asked for, in gun-turn entries (turn /
    20): the entry itself, clipped as the intent clips it; with `gun_offset` the turn from the gun onto the
    enemy's bearing plus the entry's offset, as `features.action_to_intent` makes it (a turn where no enemy
    was seen)."""
    entry = np.clip(entry, -1.0, 1.0)
    if not gun_offset:
        return entry
    bearing, _ = enemy_frame(state)
    turn = (bearing + entry * GUN_OFFSET_RANGE - state[:, 4] * 180.0 + 180.0) % 360.0 - 180.0
    seen = ~np.all(state[:, 12:17] == np.asarray(UNSEEN_ENEMY, np.float32), axis=1)
    return np.where(seen, np.clip(turn / MAX_GUN_TURN_RATE, -1.0, 1.0), entry)


def predictors(rounds: list[Round], steps: int, target: HindsightTarget, gun_offset: bool) -> str:
    """The mean squared distance of simple aims from the labels of `steps` steps before each shot."""
    label, played, teacher, onto, side = [], [], [], [], []
    for r in rounds:
        labels = hindsight_aim(r.states, steps=steps, target=target)
        at = np.flatnonzero(labels[:, 1])
        state = r.states[at, :STATE_DIM]
        bearing, sideways = enemy_frame(state)
        label.append(labels[at, 0])
        played.append(turn_asked(state, r.actions[at, 2], gun_offset))
        teacher.append(teacher_action(torch.from_numpy(state)).numpy()[:, 2])
        onto.append((bearing - state[:, 4] * 180.0 + 180.0) % 360.0 - 180.0)
        side.append(np.sign(sideways))
    g, a, t, h, d = (np.concatenate(x) for x in (label, played, teacher, onto, side))

    def distance(aim: np.ndarray) -> float:
        return float(np.mean((np.clip(aim, -1.0, 1.0) - g) ** 2))

    fit, offset = min((distance((h + c * d) / MAX_GUN_TURN_RATE), c) for c in range(-30, 31))
    return (
        f"{steps} steps toward the {target}: {len(g)} labels, squared distance of played {distance(a):.3f},"
        f" no turn {distance(np.zeros_like(g)):.3f}, teacher's {distance(t):.3f},"
        f" head-on {distance(h / MAX_GUN_TURN_RATE):.3f}, head-on {offset:+d} degrees {fit:.3f}"
    )


if __name__ == "__main__":
    main()
