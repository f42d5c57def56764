"""Saving and restoring a trainer through the archive, by the trainer's duck-typed interface.

The checkpoint layer sits below the agent layer, so it names the trainer only through this Protocol (the SAC
trainer in `sacbot.agent` satisfies it); it never imports torch or the agent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from sacbot.checkpoint.archive import CheckpointError, CheckpointMeta, load_checkpoint, save_checkpoint

ENV_STEPS_ARRAY = "counters.env_steps"
UPDATES_ARRAY = "counters.updates"


class TrainerState(Protocol):
    """What the checkpoint layer needs from a trainer (see CONTRACTS.md, Agent <-> checkpoint)."""

    env_steps: int
    updates: int

    def state_arrays(self) -> dict[str, np.ndarray]: ...

    def load_state_arrays(self, arrays: Mapping[str, np.ndarray]) -> None: ...

    def array_specs(self) -> dict[str, tuple[tuple[int, ...], str]]: ...

    def network_sizes(self) -> dict[str, Any]: ...


def trainer_meta(
    trainer: TrainerState,
    *,
    arrays: Mapping[str, np.ndarray] | None = None,
    opponent: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> CheckpointMeta:
    """The meta for a snapshot of `trainer` (no score: the gate adds it).

    The counters come from `arrays` when they carry them (`counters.env_steps`, `counters.updates`), so the
    meta describes exactly the snapshot even while another thread keeps recording.
    """
    arrays = arrays or {}
    env_steps = arrays.get(ENV_STEPS_ARRAY)
    updates = arrays.get(UPDATES_ARRAY)
    return CheckpointMeta(
        env_steps=int(trainer.env_steps if env_steps is None else env_steps),
        updates=int(trainer.updates if updates is None else updates),
        network_sizes=dict(trainer.network_sizes()),
        opponent=opponent,
        extra=dict(extra or {}),
    )


def save_trainer(
    path: str | os.PathLike[str],
    trainer: TrainerState,
    *,
    opponent: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> CheckpointMeta:
    """Atomically write the trainer's full state (every tensor and Adam state) to `path`, ungated (latest)."""
    arrays = trainer.state_arrays()
    meta = save_checkpoint(path, arrays, trainer_meta(trainer, arrays=arrays, opponent=opponent, extra=extra))
    assert meta is not None
    return meta


def restore_trainer(path: str | os.PathLike[str], trainer: TrainerState) -> CheckpointMeta | None:
    """Load `path` into `trainer` after checking every array against `trainer.array_specs()`.

    Nothing is loaded into the trainer unless the whole archive verifies. The counters come back from
    meta.json when the trainer's arrays do not carry them. A `ValueError` from the trainer (an archive that
    verified but that it still refuses) becomes a `CheckpointError`.
    """
    arrays, meta = load_checkpoint(Path(path), trainer.array_specs())
    try:
        trainer.load_state_arrays(arrays)
    except ValueError as exc:
        raise CheckpointError(f"{path}: the trainer refused the arrays: {exc}") from None
    if meta is not None and ENV_STEPS_ARRAY not in arrays:
        trainer.env_steps = meta.env_steps
    if meta is not None and UPDATES_ARRAY not in arrays:
        trainer.updates = meta.updates
    return meta
