"""What the runtime needs from the learner: two small interfaces, built over `sacbot.agent` in learner.py.

Keeping them here lets the threads, the channel and the saver stay independent of the networks' details.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from sacbot.runtime.records import Transition


class TickActor(Protocol):
    """An immutable per-tick actor (no autograd): state + hidden -> action + new hidden."""

    def initial_hidden(self) -> np.ndarray: ...

    def step(
        self,
        obs: np.ndarray,
        hidden: np.ndarray,
        deterministic: bool,
        drawn: np.ndarray | None = None,
        eps: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]: ...


class Learner(Protocol):
    """The SAC-GRU trainer plus its sequence replay, used from the trainer thread only."""

    @property
    def env_steps(self) -> int: ...

    @property
    def updates(self) -> int: ...

    def add(self, transition: Transition) -> None:
        """Store one transition; `done` closes the round's episode."""

    def cut_episode(self) -> None:
        """Close the open round without a terminal flag (it was cut short)."""

    def rounds_stored(self) -> int: ...

    def replay_size(self) -> int: ...

    def update(self) -> dict[str, float]:
        """One gradient update: critic_loss, actor_loss, alpha_loss and alpha ({} if it cannot sample yet)."""

    def fast_actor(self) -> TickActor:
        """A new immutable fast actor on a copy of the current actor weights."""

    def state_arrays(self) -> dict[str, np.ndarray]:
        """Every tensor (copies), for a checkpoint."""

    def network_sizes(self) -> dict[str, Any]:
        """The network sizes, for the checkpoint's metadata."""

    def export_replay(self, max_steps: int) -> dict[str, np.ndarray]:
        """The newest whole rounds of the replay, up to `max_steps` steps (`SequenceReplay.export_rounds`)."""
