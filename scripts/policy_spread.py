"""How spread the policy is, per action entry, on the states of a kept replay (docs/learning.md, "Bounding the
policy's spread").

    python scripts/policy_spread.py CHECKPOINT REPLAY [--states 20000]

REPLAY is a `replay.npz` (a weights folder's or a train-fast run's kept replay), which stores each step's
state and the actor's hidden state before it, so one actor step per stored step gives the policy the bot had
there. Prints, per entry (turn, target speed, gun turn, fire): the median std before tanh, the share of states
where it is above 1, the median |tanh(mu)| (the mean action's size) and the share of states where the mean is
saturated (|tanh(mu)| > 0.95).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from sacbot.agent.features import network_inputs
from sacbot.agent.networks import Actor
from sacbot.checkpoint import load_checkpoint
from sacbot.runtime.startup import network_sizes_for
from sacbot.settings import load_sacbot_settings

ENTRIES = ("turn", "speed", "gun turn", "fire")


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("checkpoint")
    parser.add_argument("replay")
    parser.add_argument("--states", type=int, default=20_000)
    args = parser.parse_args()
    arrays, meta = load_checkpoint(args.checkpoint)
    sizes = network_sizes_for(load_sacbot_settings(), meta)
    actor = Actor(sizes)
    own = {k.removeprefix("actor."): torch.from_numpy(v) for k, v in arrays.items() if k.startswith("actor.")}
    actor.load_state_dict(own)
    with np.load(args.replay, allow_pickle=False) as replay:
        obs, hidden = replay["obs"], replay["hidden"]
    pick = np.random.default_rng(0).choice(len(obs), min(args.states, len(obs)), replace=False)
    states = torch.from_numpy(network_inputs(obs[pick], sizes))
    with torch.no_grad():
        mu, log_std, _ = actor.sequence_tm(states[None], torch.from_numpy(hidden[pick]))
    std, size = log_std[0].exp().numpy(), np.abs(np.tanh(mu[0].numpy()))
    print(f"{len(pick)} states; log std bound {sizes.log_std_max:g}")
    print("| entry | median std | std > 1 | median abs(tanh mu) | saturated mean |")
    print("|---|---|---|---|---|")
    for i, name in enumerate(ENTRIES):
        print(
            f"| {name} | {np.median(std[:, i]):.2f} | {(std[:, i] > 1).mean():.0%} "
            f"| {np.median(size[:, i]):.3f} | {(size[:, i] > 0.95).mean():.0%} |"
        )


if __name__ == "__main__":
    main()
