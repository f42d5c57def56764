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
higher, and where the best offset lies.

A gun turn of 0.8 moves the shot 16 degrees; a hit of power 2 is worth a reward of 10 (learner.md), so a
critic that knew where a shot lands would rate the right offset several units above a miss.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from sacbot.agent.features import FIRE_THRESHOLD, MAX_FIREPOWER, network_inputs
from sacbot.agent.inference import FastActor
from sacbot.agent.sizes import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import latest_path, read_meta, restore_trainer
from sacbot.env.vector import VecTankRoyaleEnv
from sacbot.runtime.startup import network_sizes_for
from sacbot.settings import load_sacbot_settings

OFFSETS = np.round(np.arange(-0.8, 0.81, 0.1), 2)
CONTEXT = 16  # steps of the critics' burn-in before the step under test
GUN_HEAT = 6  # the state's gun-heat entry (features.py)


def play(
    actor: FastActor, sizes: NetworkSizes, opponent: str, rounds: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(stored states (T+1, S + the critics' own inputs), actions (T, A)) per round, the actor's mean
    playing."""
    vec = VecTankRoyaleEnv(
        1,
        (opponent,),
        radar_mode="lock",
        max_turns=3000,
        rounds_per_game=rounds,
        bullet_inputs=sizes.bullet_inputs,
    )
    obs, _ = vec.reset(seed=5)
    hidden = np.zeros((1, actor.hidden_dim), np.float32)
    done: list[tuple[np.ndarray, np.ndarray]] = []
    states, actions = [obs[0].copy()], []
    while len(done) < rounds:
        action, hidden = actor.step_batch(obs[:, : sizes.state_dim], hidden, deterministic=True)
        obs, _, terminated, truncated, _ = vec.step(action)
        actions.append(action[0].copy())
        states.append(obs[0].copy())
        if terminated[0] or truncated[0]:
            done.append((np.stack(states), np.stack(actions)))
            states, actions = [obs[0].copy()], []
            hidden[:] = 0.0
    vec.close()
    return done


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("run")
    parser.add_argument("opponent", nargs="?", default="StopGo")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--entry", type=int, default=2, choices=range(4))
    args = parser.parse_args()
    torch.set_num_threads(1)
    path = latest_path(args.run)
    sizes = network_sizes_for(load_sacbot_settings(), read_meta(path))
    trainer = SacTrainer(TrainerConfig(sizes=sizes, device="cpu"))
    restore_trainer(path, trainer)
    critic = trainer.critic
    curves, best = [], []
    with torch.no_grad():
        actor = FastActor(trainer.actor_arrays(), sizes)
        for states, actions in play(actor, sizes, args.opponent, args.rounds):
            stored = states[: len(actions)]  # what the critics read: the widened state, their own inputs
            own = stored[:, sizes.state_dim :]
            net = np.concatenate([network_inputs(stored[:, : sizes.state_dim], sizes), own], -1)
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


if __name__ == "__main__":
    main()
