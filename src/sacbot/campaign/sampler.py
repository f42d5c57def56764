"""The weighted opponent sampler: the opponent of chunk k depends only on (seed, k).

That makes a resumed or retried chunk play the same opponent it would have played the first time.
"""

from __future__ import annotations

import random
from collections.abc import Mapping


class OpponentSampler:
    def __init__(self, weights: Mapping[str, float], seed: int) -> None:
        pool = [(name, float(w)) for name, w in weights.items() if w > 0]
        if not pool:
            raise ValueError("the opponent pool needs at least one positive weight")
        self._names = [name for name, _ in pool]
        self._weights = [w for _, w in pool]
        self._seed = seed

    def sample(self, chunk: int) -> str:
        # A string seed is hashed deterministically (sha512) by random.Random, unlike a tuple.
        rng = random.Random(f"sacbot-campaign:{self._seed}:{chunk}")
        return rng.choices(self._names, weights=self._weights, k=1)[0]
