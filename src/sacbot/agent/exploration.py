"""Temporally correlated exploration noise for training play: one stream of coloured Gaussian noise per arena.

SAC draws each action as tanh(mu + std * eps). Training play draws eps independently every turn (white noise),
so at 30 turns a second a drift of the body or the gun averages out within a few turns, and the replay holds
little besides the policy's mean path. Coloured noise (Eberhard et al., "Pink Noise Is All You Need",
ICLR 2023) keeps each eps Gaussian with unit variance but correlates it in time: its power spectrum is
proportional to 1/f**beta. beta = 0 is white, 1 pink (the paper's default for off-policy continuous control),
2 red (a random walk's). The policy's spread, its log-probabilities and the SAC losses stay as they are; only
the behaviour's draws are correlated, which an off-policy learner allows.

`ColouredNoise` holds, per stream, a sequence of `length` draws for each action entry, generated at once by
the `colorednoise` package (Timmer and Koenig's method), and hands them out one turn at a time. A stream
starts a fresh sequence at each round's start (`restart`) and when its sequence runs out, so rounds do not
share their drift.
"""

from __future__ import annotations

import numpy as np

SEQUENCE_LENGTH = 1_000  # turns per generated sequence: the lowest frequency the drift has is 1 / 1000 turns


class ColouredNoise:
    """`streams` independent streams of unit-variance Gaussian draws, each `action_dim` entries wide, with the
    power spectrum 1/f**beta along time."""

    def __init__(
        self,
        beta: float,
        streams: int,
        action_dim: int,
        seed: int | None = None,
        length: int = SEQUENCE_LENGTH,
    ) -> None:
        if not (0.0 <= beta <= 3.0):
            raise ValueError(f"the noise's beta must lie in [0, 3], not {beta!r}")
        if streams < 1 or action_dim < 1 or length < 2:
            raise ValueError("ColouredNoise needs at least one stream and action entry, and length >= 2")
        self.beta = beta
        self.length = length
        self.rng = np.random.default_rng(seed)
        self._sequences = np.empty((streams, action_dim, length), np.float32)
        self._view = self._sequences.view()  # what `draw_one` hands out: read-only
        self._view.flags.writeable = False
        self._next = np.zeros(streams, np.int64)
        self._rows = np.arange(streams)
        for i in range(streams):
            self.restart(i)

    @property
    def streams(self) -> int:
        return int(self._sequences.shape[0])

    def restart(self, stream: int) -> None:
        """A fresh sequence for `stream` (a new round there)."""
        import colorednoise

        shape = (self._sequences.shape[1], self.length)
        self._sequences[stream] = colorednoise.powerlaw_psd_gaussian(self.beta, shape, random_state=self.rng)
        self._next[stream] = 0

    def draw(self) -> np.ndarray:
        """The next draw of every stream: (streams, action_dim), float32."""
        for i in np.flatnonzero(self._next >= self.length):
            self.restart(int(i))
        out = self._sequences[self._rows, :, self._next]
        self._next += 1
        return out

    def draw_one(self, stream: int) -> np.ndarray:
        """The next draw of one stream: (action_dim,), a read-only view (the realtime thread's path: one
        index, no copy; the actor copies it into its own buffer)."""
        k = int(self._next[stream])
        if k >= self.length:
            self.restart(stream)
            k = 0
        self._next[stream] = k + 1
        return self._view[stream, :, k]


GUN_TURN = 2  # the action's gun-turn entry: (turn, speed, gun turn, fire), `sacbot.agent.features`


def widen_gun(eps: np.ndarray, spread: float) -> np.ndarray:
    """Standard normal draws (N, A) with the gun turn's scaled by `spread`: the gun turn is then drawn as
    tanh(mu + spread * std * eps), `spread` times the policy's spread, the other entries as the policy draws
    them. The policy, its log-probabilities and the losses are unchanged (an off-policy learner allows any
    behaviour); a wider gun puts shots aimed off the mean into the replay, where the critics can score them.
    Returns a new array; `eps` is not written."""
    out = np.array(eps, np.float32)  # a copy: a coloured stream's draws stay as they were
    out[:, GUN_TURN] *= spread
    return out


class WideGun:
    """Training play's draws for `streams` arenas with the gun turn's `spread` times wider (`widen_gun`): over
    the coloured stream's draws when there is one, else over draws of its own generator."""

    def __init__(self, spread: float, streams: int, action_dim: int, seed: int) -> None:
        self.spread = spread
        self.shape = (streams, action_dim)
        self.rng = np.random.default_rng(seed)

    def draw(self, eps: np.ndarray | None) -> np.ndarray:
        """(streams, action_dim): `eps` (None: fresh standard normal draws) with the gun turn's widened."""
        if eps is None:
            eps = self.rng.standard_normal(self.shape, np.float32)
        return widen_gun(eps, self.spread)


__all__ = ["GUN_TURN", "SEQUENCE_LENGTH", "ColouredNoise", "WideGun", "widen_gun"]
