"""Rounds won and hit shares of a checkpoint's mean, in-process (docs/learning.md, "Surf shaping").

    python scripts/inprocess_duel.py CHECKPOINT OPPONENTS [--rounds 100] [--seeds 1,2,3] [--power P]
        [--movement teacher|surf] [--gun linear|wave] [--agreement]

Plays `--rounds` rounds of the checkpoint's actor (its mean, as `sacbot eval` plays; a full checkpoint or an
actor archive such as the shipped `src/sacbot/data/sacbot-actor.zip`) against each of OPPONENTS
(comma-separated), one game per seed, in the Gymnasium environment: no server, no clock, about 100 rounds in
20 seconds where a real-time `sacbot eval` takes minutes. Prints per opponent and seed: the rounds won, the
share of our shots that hit and their mean power, the share of the enemy's shots that hit us, and how we
moved: the mean distance between the bots, our mean |speed|, and our reversals (speed changing sign) a
round. With `--power P`, every shot the actor fires goes out at power P instead (a check of what the power is
worth). With `--movement`, the actor's turn and speed entries are replaced by the teacher's
(`sacbot.agent.teacher.teacher_action`) or, `surf`, by the surfing teacher's (`surf_movement`, read over the
last 9 observations of the round, as a trainer's window reads it after its burn-in): what the kickstart term
would teach the movement, played with the actor's own gun (the checkpoint's sizes need the threat inputs).
With `--gun`, the gun turn and fire entries are the teacher's instead: linear targeting, or `wave` the aim
entry of the wave inputs (their peak; with SACBOT_WAVE_AIM=virtual, the peak or the linear aim, whichever has
hit more of our waves this game): what the wave gun teacher would teach, played with the actor's movement.
With `--agreement` (threat inputs too) each line ends with how far the actor's own speed entry follows the
surfing teacher where surfing decides (on the steps whose surfing label differs from the orbiting teacher's):
that share of the steps, then the share of them where the actor's entry falls in the label's class (back
below -0.5, stop between, go above 0.5; a third is chance) and the label's and the actor's classes there.
The figures are not a real-time eval's (no turn is ever late here, and the seeds place the bots otherwise),
so compare checkpoints with each other here, side by side.
"""

from __future__ import annotations

import argparse
import time
from collections import deque
from pathlib import Path

import numpy as np
import torch
from shot_q import duel_env  # this folder's: run as `python scripts/inprocess_duel.py`

from sacbot.agent.features import MAX_FIREPOWER
from sacbot.agent.inference import FastActor
from sacbot.agent.teacher import surf_movement, teacher_action
from sacbot.checkpoint import load_checkpoint, read_meta
from sacbot.checkpoint.archive import ACTOR_PREFIX
from sacbot.errors import UserError
from sacbot.runtime.startup import network_sizes_for
from sacbot.settings import load_sacbot_settings

WINDOW = 9  # observations the surfing teacher reads: a trained step's own and its 8 burn-in steps


def movements_of(seen: deque[np.ndarray], threat_at: int) -> tuple[np.ndarray, np.ndarray]:
    """The teacher's (turn, speed) for the latest of the observations `seen`, and the surfing teacher's."""
    window = torch.from_numpy(np.stack(seen)).unsqueeze(1)  # (T, 1, D), time-major as a trainer's
    taught = teacher_action(window)[..., :2]
    surfed = surf_movement(window, taught, threat_at) if threat_at >= 0 else taught
    return taught[-1, 0].numpy(), surfed[-1, 0].numpy()


def speed_class(entry: float) -> int:
    """0 back, 1 stop, 2 go: the class of a speed entry (the surfing teacher asks for -1, 0 or 1)."""
    return 0 if entry < -0.5 else (2 if entry > 0.5 else 1)


def duel(
    actor: FastActor,
    checkpoint: Path,
    opponent: str,
    rounds: int,
    seed: int,
    power: float | None,
    movement: str | None = None,
    agreement: bool = False,
    gun: str | None = None,
) -> str:
    sizes = actor.sizes
    threat_at = sizes.threat_at if sizes.threat_inputs else -1
    decided = np.zeros((3, 3), np.int64)  # where surfing decides: the label's class by the actor's
    steps = 0
    env = duel_env(sizes, opponent, rounds)
    obs, _ = env.reset(seed=seed)
    won = shots = hits = theirs = hit_us = 0
    powers: list[float] = []
    distances: list[float] = []
    speeds: list[float] = []
    reversals = 0
    started = time.perf_counter()
    for _ in range(rounds):
        hidden = actor.initial_hidden()
        enemy_bullets: set[int] = set()
        heading = 0.0  # the sign of our last non-zero speed
        seen: deque[np.ndarray] = deque(maxlen=WINDOW)
        while True:
            action, hidden = actor.step(obs[: sizes.observed_dim], hidden, deterministic=True)
            steps += 1
            if power is not None and action[3] * MAX_FIREPOWER > 0.1:
                action = np.array(action, np.float32)
                action[3] = power / MAX_FIREPOWER
            if gun is not None:
                now = torch.from_numpy(np.array(obs[: sizes.observed_dim], np.float32))
                wave_at = sizes.state_dim if gun == "wave" else -1
                taught = teacher_action(now, gun_offset=sizes.gun_offset, wave_at=wave_at).numpy()
                action = np.array(action, np.float32)
                action[2:] = taught[2:]
            if movement is not None or agreement:
                seen.append(np.array(obs[: sizes.observed_dim], np.float32))
                taught, surfed = movements_of(seen, threat_at)
                if agreement and surfed[1] != taught[1]:
                    decided[speed_class(float(surfed[1])), speed_class(float(action[1]))] += 1
                if movement is not None:
                    action = np.array(action, np.float32)
                    action[:2] = surfed if movement == "surf" else taught
            obs, _, terminated, truncated, info = env.step(action)
            for ev in info["events"]:
                if ev.type == "BulletFiredEvent" and ev.bullet.owner_id == env.agent_id:
                    shots += 1
                    powers.append(ev.bullet.power)
                elif ev.type == "BulletHitBotEvent":
                    hits += ev.bullet.owner_id == env.agent_id
                    hit_us += ev.victim_id == env.agent_id
            assert env.game is not None
            enemy_bullets.update(b.bullet_id for b in env.game.bullets if b.owner_id == env.opponent_id)
            states = {b["id"]: b for b in env.game.tick_for_observer_dict()["botStates"]}
            us, them = states.get(env.agent_id), states.get(env.opponent_id)
            if us is not None and them is not None:
                distances.append(float(np.hypot(us["x"] - them["x"], us["y"] - them["y"])))
                speeds.append(abs(us["speed"]))
                if us["speed"] != 0.0:
                    reversals += heading != 0.0 and np.sign(us["speed"]) != heading
                    heading = float(np.sign(us["speed"]))
            if terminated or truncated:
                break
        theirs += len(enemy_bullets)
        won += info["round_result"]["outcome"] == "won"
        obs, _ = env.reset()
    env.close()
    mean_power = np.mean(powers) if powers else 0.0
    follows = ""
    if agreement:
        n = max(int(decided.sum()), 1)
        label, actor_class = decided.sum(1) / n, decided.sum(0) / n
        follows = (
            f"; surfing decides {decided.sum() / max(steps, 1):.3f} of steps, the actor follows it on"
            f" {np.trace(decided) / n:.3f} (back/stop/go: label {label[0]:.2f}/{label[1]:.2f}/{label[2]:.2f},"
            f" actor {actor_class[0]:.2f}/{actor_class[1]:.2f}/{actor_class[2]:.2f})"
        )
    return (
        f"{checkpoint} vs {opponent}, seed {seed}: won {won} of {rounds}; "
        f"our hits {hits / max(shots, 1):.3f} of {shots} (power {mean_power:.2f}); "
        f"theirs {hit_us / max(theirs, 1):.3f} of {theirs}; distance {np.mean(distances):.0f}, "
        f"speed {np.mean(speeds):.1f}, reversals {reversals / rounds:.1f} a round "
        f"({time.perf_counter() - started:.0f} s){follows}"
    )


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("opponents")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--power", type=float, default=None, help="every shot at this power (0.1-3)")
    parser.add_argument("--movement", choices=("teacher", "surf"), default=None)
    parser.add_argument("--gun", choices=("linear", "wave"), default=None, help="the teacher's gun plays")
    parser.add_argument("--agreement", action="store_true", help="does the speed follow the surfing teacher")
    args = parser.parse_args()
    try:
        if args.power is not None and not 0.1 <= args.power <= MAX_FIREPOWER:
            raise UserError(f"--power must lie in [0.1, 3], not {args.power}")
        arrays, _ = load_checkpoint(args.checkpoint)
        sizes = network_sizes_for(load_sacbot_settings(), read_meta(args.checkpoint))
        actor = FastActor({k: v for k, v in arrays.items() if k.startswith(ACTOR_PREFIX)}, sizes)
        if args.gun == "wave" and not sizes.wave_inputs:
            raise UserError(f"{args.checkpoint}: --gun wave reads the wave inputs, which it has not")
        if (args.movement == "surf" or args.agreement) and not sizes.threat_inputs:
            what = "--agreement" if args.agreement else "--movement surf"
            raise UserError(f"{args.checkpoint}: {what} reads the threat inputs, which it has not")
        for opponent in args.opponents.split(","):
            for seed in (int(s) for s in args.seeds.split(",")):
                how = (args.power, args.movement, args.agreement, args.gun)
                line = duel(actor, args.checkpoint, opponent, args.rounds, seed, *how)
                print(line, flush=True)
    except (UserError, OSError, ValueError) as exc:
        raise SystemExit(f"inprocess_duel: {exc}") from None


if __name__ == "__main__":
    main()
