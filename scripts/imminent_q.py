"""What the critics make of a bullet about to hit (docs/learning.md, "Critic-only bullet inputs").

    python scripts/imminent_q.py RUN_FOLDER REPLAY [--samples 600]

REPLAY is a kept replay (`replay.npz`) stored with the critics' bullet inputs (a run with
`SACBOT_BULLET_INPUTS=1`); its inputs pick two sets of steps, at least 16 into their round, where our nearest
bullet still on its way (slot 0) has the enemy less than 30 units ahead: an imminent hit (the enemy under 12
units from the path) and a near miss (over 40). For each set it prints the reward of the next four steps (a
hit of power 2 is worth 10) and the mean min(Q1, Q2) that RUN_FOLDER's critics give the played action there,
their hidden state from the 16 steps before started at zero, as in training's burn-in. Critics without the
bullet inputs (the baseline) are asked the same about the same steps from the state alone.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import torch
from shot_q import critic_inputs, load_run  # this folder's: run as `python scripts/imminent_q.py`

from sacbot.agent.features import BULLET_OFFSET_SCALE
from sacbot.agent.sizes import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.checkpoint.replay_file import load_replay

CONTEXT = 16
DIAGONAL = math.hypot(800.0, 600.0)  # the 1v1 arena's (the along entry's scale)


def mean_q(trainer: SacTrainer, obs: np.ndarray, action: np.ndarray, steps: np.ndarray) -> float:
    """Mean min(Q1, Q2) of the played actions at `steps`, each from the CONTEXT steps before."""
    sizes = trainer.config.sizes
    window = steps[:, None] + np.arange(-CONTEXT, 1)  # (N, CONTEXT + 1)
    net = critic_inputs(obs[window][..., : sizes.stored_dim], sizes)
    x = torch.as_tensor(np.concatenate([net, action[window]], -1).swapaxes(0, 1).copy())
    with torch.no_grad():
        q, _, _ = trainer.critic.sequence_tm(x, trainer.critic.initial_hidden(len(steps)))
    return float(q[:, -1].min(0).values.mean())


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("run")
    parser.add_argument("replay")
    parser.add_argument("--samples", type=int, default=600)
    args = parser.parse_args()
    trainer = load_run(args.run)
    picker = NetworkSizes(bullet_inputs=True)
    kept = load_replay(args.replay, picker.stored_dim, picker.action_dim, picker.hidden)
    obs, action, reward = kept["obs"], kept["action"], kept["reward"]
    position = np.concatenate([np.arange(n) for n in kept["lengths"].tolist()])
    slot = obs[:, picker.state_dim : picker.state_dim + 3]
    along, offset = slot[:, 1] * DIAGONAL, np.abs(slot[:, 2]) * BULLET_OFFSET_SCALE
    near = (slot[:, 0] > 0) & (position >= CONTEXT) & (along > 0) & (along < 30)
    ends = np.cumsum(kept["lengths"])
    rng = np.random.default_rng(0)
    figures = {}
    for name, chosen in (("imminent hit", near & (offset < 12)), ("near miss", near & (offset > 40))):
        steps = np.flatnonzero(chosen)
        steps = rng.choice(steps, min(args.samples, len(steps)), replace=False)
        if not len(steps):
            raise SystemExit(f"no {name} in {args.replay}")
        end = ends[np.searchsorted(ends, steps, side="right")]  # the step's round end: no reward past it
        ahead = np.mean([reward[s : min(s + 4, e)].sum() for s, e in zip(steps, end, strict=True)])
        figures[name] = q = mean_q(trainer, obs, action, steps)
        print(f"{name}: {len(steps)} steps, reward of the next four {ahead:+.2f}, Q {q:+.2f}")
    gap = figures["imminent hit"] - figures["near miss"]
    print(f"{args.run}: Q(imminent hit) - Q(near miss) = {gap:+.2f}")


if __name__ == "__main__":
    main()
