"""What the critics make of a shot's aim (docs/learning.md, "A wider gun in training play").

    python scripts/shot_q.py RUN_FOLDER [OPPONENT] [--rounds 20] [--entry 2]

Plays `--rounds` in-process rounds of the run folder's `latest.zip` (its mean, as `sacbot eval` plays) against
OPPONENT (StopGo by default). At every shot (the fire entry above the threshold with the gun cool) it takes
the step before, whose gun turn sets the direction the bullet leaves in (REFERENCE.md: a bullet starts in the
pre-turn gun direction), and asks the twin critics (the smaller of the two, as the actor's loss does) for
Q(s, a) with that step's entry `--entry` (2 the gun turn, 1 the target speed) moved by -0.8 .. +0.8 from
what the mean did, the other entries as played. The critics' hidden state comes from the 16 steps before,
started at zero as in training's burn-in (with the critics' bullet inputs when the run has them). Prints,
per offset, the mean of Q(offset) - Q(0) over the shots and the share of shots where the offset rates
higher, and where the best offset lies. Then, for the shots that hit and those that missed, the mean Q of the
played actions at the aiming step and 0, 5 and 10 steps after the turn the bullet left in: a critic that
follows its bullets rates a hit on its way above a miss (with the bullet inputs they see it in flight).

A gun turn of 0.8 moves the shot 16 degrees; a hit of power 2 is worth a reward of 10 (learner.md), so a
critic that knew where a shot lands would rate the right offset several units above a miss.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import torch

from sacbot.agent.features import FIRE_THRESHOLD, MAX_FIREPOWER, network_inputs
from sacbot.agent.inference import FastActor
from sacbot.agent.networks import TwinCritic
from sacbot.agent.sizes import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import latest_path, read_meta, restore_trainer
from sacbot.env.arena_env import TankRoyaleEnv
from sacbot.runtime.startup import network_sizes_for
from sacbot.settings import load_sacbot_settings

OFFSETS = np.round(np.arange(-0.8, 0.81, 0.1), 2)
CONTEXT = 16  # steps of the critics' burn-in before the step under test
AFTER = (0, 5, 10)  # steps after the shot's turn at which the hit-or-miss gap is read
GUN_HEAT = 6  # the state's gun-heat entry (features.py)


@dataclass
class Round:
    """One round of the mean's play: stored states (T+1, S + the critics' own inputs), actions (T, A), and
    our bullets: the step whose intent fired each (its id -> step) and the ids that hit the enemy; and the
    enemy's: how many it fired (the engine's own count) and how many hit us."""

    states: np.ndarray
    actions: np.ndarray
    fired: dict[int, int]
    hits: set[int]
    enemy_shots: int = 0
    enemy_hits: int = 0


def duel_env(sizes: NetworkSizes, opponent: str, rounds: int) -> TankRoyaleEnv:
    """A game of `rounds` in-process rounds against `opponent` that observes what a run of `sizes` reads."""
    return TankRoyaleEnv(
        opponent,
        radar_mode="lock",
        max_turns=3000,
        rounds_per_game=rounds,
        sizes=sizes,
    )


def play(actor: FastActor, sizes: NetworkSizes, opponent: str, rounds: int) -> list[Round]:
    """`rounds` in-process rounds of the actor's mean against `opponent`."""
    env = duel_env(sizes, opponent, rounds)
    done: list[Round] = []
    obs, _ = env.reset(seed=5)
    while len(done) < rounds:
        hidden = actor.initial_hidden()
        states, actions = [obs], list[np.ndarray]()
        fired: dict[int, int] = {}
        hits: set[int] = set()
        theirs: set[int] = set()  # the enemy's bullet ids this round
        hit_us = 0
        while True:
            action, hidden = actor.step(obs[: sizes.observed_dim], hidden, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            for ev in info["events"]:
                if ev.type == "BulletFiredEvent":
                    fired[ev.bullet.bullet_id] = len(actions)
                elif ev.type == "BulletHitBotEvent" and ev.bullet.owner_id == env.agent_id:
                    hits.add(ev.bullet.bullet_id)
                elif ev.type == "BulletHitBotEvent" and ev.victim_id == env.agent_id:
                    hit_us += 1
            assert env.game is not None
            theirs.update(b.bullet_id for b in env.game.bullets if b.owner_id == env.opponent_id)
            actions.append(action)
            states.append(obs)
            if terminated or truncated:
                break
        done.append(Round(np.stack(states), np.stack(actions), fired, hits, len(theirs), hit_us))
        obs, _ = env.reset()
    env.close()
    return done


def load_run(run: str) -> SacTrainer:
    """The trainer of a run folder's `latest.zip`, on the CPU, with the sizes it was built with."""
    torch.set_num_threads(1)
    path = latest_path(run)
    trainer = SacTrainer(TrainerConfig(sizes=network_sizes_for(load_sacbot_settings(), read_meta(path))))
    restore_trainer(path, trainer)
    return trainer


def critic_inputs(stored: np.ndarray, sizes: NetworkSizes) -> np.ndarray:
    """What the critics read for stored states (..., `sizes.stored_dim`): the widened state, then their own
    inputs (the numpy form of `SacTrainer._tensors`' critic inputs)."""
    own = stored[..., sizes.observed_dim :]
    return np.concatenate([network_inputs(stored[..., : sizes.observed_dim], sizes), own], -1)


def q_played(critic: TwinCritic, net: np.ndarray, actions: np.ndarray, i: int) -> float:
    """min(Q1, Q2) of step i's played action, the hidden state from the CONTEXT steps before (from zero)."""
    x = np.concatenate([net[i - CONTEXT : i + 1], actions[i - CONTEXT : i + 1]], -1)
    q, _, _ = critic.sequence_tm(torch.as_tensor(x).unsqueeze(1), critic.initial_hidden(1))
    return float(q[:, -1, 0].min())


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("run")
    parser.add_argument("opponent", nargs="?", default="StopGo")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--entry", type=int, default=2, choices=range(4))
    args = parser.parse_args()
    trainer = load_run(args.run)
    sizes, critic = trainer.config.sizes, trainer.critic
    curves, best = [], []
    hit_q: list[list[float]] = []
    miss_q: list[list[float]] = []
    with torch.no_grad():
        actor = FastActor(trainer.actor_arrays(), sizes)
        for played in play(actor, sizes, args.opponent, args.rounds):
            states, actions = played.states, played.actions
            net = critic_inputs(states[: len(actions)], sizes)
            for bullet, t in played.fired.items():  # Q of the played actions around each shot, hit or not
                if CONTEXT + 1 <= t and t + 1 + max(AFTER) < len(actions):
                    row = [q_played(critic, net, actions, t - 1 + k) for k in (0, *(1 + a for a in AFTER))]
                    (hit_q if bullet in played.hits else miss_q).append(row)
            for t in range(CONTEXT + 1, len(actions)):
                if actions[t, 3] * MAX_FIREPOWER <= FIRE_THRESHOLD or states[t, GUN_HEAT] > 1e-6:
                    continue  # no shot at t
                s = t - 1  # the step whose gun turn aims the shot
                x = np.concatenate([net[s - CONTEXT : s], actions[s - CONTEXT : s]], -1)
                h = critic.hidden_tm(torch.as_tensor(x).unsqueeze(1), critic.initial_hidden(1))[:, -1]
                grid = np.repeat(actions[s][None], len(OFFSETS), 0)
                grid[:, args.entry] = np.clip(actions[s, args.entry] + OFFSETS, -1.0, 1.0)
                xs = np.concatenate([np.repeat(net[s][None], len(OFFSETS), 0), grid], -1)
                hs = h.expand(2, len(OFFSETS), h.shape[-1]).contiguous()
                q = critic.step(torch.as_tensor(xs), hs).min(0).values.numpy()
                curves.append(q - q[len(OFFSETS) // 2])
                best.append(OFFSETS[int(np.argmax(q))])
    if not curves:
        raise SystemExit("no shot in these rounds")
    c, b = np.stack(curves), np.asarray(best)
    print(f"{args.run} against {args.opponent}: {len(c)} shots, entry {args.entry}")
    print("offset          " + " ".join(f"{x:+.1f}" for x in OFFSETS))
    print("mean dQ         " + " ".join(f"{x:+.2f}" for x in c.mean(0)))
    print("share rated up  " + " ".join(f"{x:.2f}" for x in (c > 0).mean(0)))
    left, mid, right = np.mean(b < -0.15), np.mean(np.abs(b) <= 0.15), np.mean(b > 0.15)
    print(f"best offset: below -0.15 {left:.2f}, within 0.15 {mid:.2f}, above +0.15 {right:.2f}")
    print(f"mean |dQ| at +-0.8: {np.abs(c[:, [0, -1]]).mean():.3f}")
    if hit_q and miss_q:
        h, m = np.asarray(hit_q).mean(0), np.asarray(miss_q).mean(0)
        steps = ["aiming step", *(f"{a} after the shot" for a in AFTER)]
        print(f"Q of the played actions, {len(hit_q)} shots that hit against {len(miss_q)} that missed:")
        gaps = zip(steps, h, m, strict=True)
        print("  " + "; ".join(f"{name} {x:+.2f} / {y:+.2f} (gap {x - y:+.2f})" for name, x, y in gaps))


if __name__ == "__main__":
    main()
