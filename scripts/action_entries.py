"""Which action entries to draw from the policy: a checkpoint's actor in seeded in-process engine games
(docs/learning.md, "The sampled policy and its mean").

    python scripts/action_entries.py CHECKPOINT DRAWN[,DRAWN...] [OPPONENTS] [--rounds 100]

DRAWN names the action entries drawn from the policy, the others playing tanh of its mean: `none` (the mean,
as `sacbot eval` plays), `all` (as training play draws), or digits of the entries (0 turn, 1 target speed,
2 gun turn, 3 fire; `1` is `sacbot eval --actions speed`). OPPONENTS defaults to the Teacher and the five
advanced opponents. Each row plays 5 games of rounds/5 rounds (sides swapped every other game, engine seeds
0..4); a cell is rounds won / rounds (score share). Real-time `sacbot eval --actions` is the measure of
record; this runs in seconds.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from opponent_table import duel_with  # this folder's (scripts/ is sys.path[0])

from sacbot.agent.features import ACTION_DIM
from sacbot.agent.inference import FastActor
from sacbot.agent.sizes import NetworkSizes
from sacbot.checkpoint import load_checkpoint
from sacbot.env.league import FrozenActorBot


class DrawingBot(FrozenActorBot):
    """The frozen actor, drawing the entries of `drawn` (a 0/1 mask; None: the mean) from the policy."""

    def __init__(self, actor: Any, drawn: np.ndarray | None, seed: int) -> None:
        super().__init__(actor, "drawn", "lock", seed=seed)
        self.drawn = drawn

    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.drawn is None:
            return super().act(obs)
        return self.actor.step(obs, self.hidden, False, self.drawn)


def mask_of(drawn: str) -> np.ndarray | None:
    if drawn == "none":
        return None
    mask = np.zeros(ACTION_DIM, np.float32)
    mask[list(range(ACTION_DIM)) if drawn == "all" else [int(c) for c in drawn]] = 1.0
    return mask


def duel(arrays: dict[str, np.ndarray], sizes: NetworkSizes, drawn: str, enemy: str, rounds: int) -> str:
    def make_bot(game: int) -> DrawingBot:
        return DrawingBot(FastActor(arrays, sizes, seed=100 + game), mask_of(drawn), seed=game)

    won, share = duel_with(make_bot, enemy, rounds)
    return f"{won}/{rounds} ({share:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("drawn")
    parser.add_argument("enemies", nargs="?", default="Teacher,Rammer,Gunner,Orbiter,StopGo,Surfer")
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    arrays, meta = load_checkpoint(args.checkpoint)
    built = dict(meta.network_sizes) if meta is not None else {}
    sizes = NetworkSizes(
        angle_inputs=bool(built.get("angle_inputs")), energy_inputs=bool(built.get("energy_inputs"))
    )
    actor = {k: v for k, v in arrays.items() if k.startswith("actor.")}
    enemies = args.enemies.split(",")
    print("| drawn | " + " | ".join(enemies) + " |")
    print("|---" * (len(enemies) + 1) + "|")
    for drawn in args.drawn.split(","):
        cells = [duel(actor, sizes, drawn, enemy, args.rounds) for enemy in enemies]
        print(f"| {drawn} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
