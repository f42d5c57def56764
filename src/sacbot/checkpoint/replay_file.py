"""`replay.npz`: the sequence replay kept across processes, next to `latest.zip` in a weights folder
(`sacbot.rundir.WeightsPaths.replay`).

`sacbot play` restarts for every campaign chunk; with an empty replay its trainer would start updating after
two fresh rounds and fit them (the real-time chunks made the bot worse that way). So a trainer writes the
newest whole rounds of its replay here when its game ends (`sacbot play`, off the real-time thread) or when
it saves (`sacbot train-fast`), and the next process loads them before its first tick.

The file is numpy's `.npz` (uncompressed), written through the one atomic writer and read with
`allow_pickle=False`: per step `obs`, `next_obs`, `action`, `reward`, `done`, `hidden` (float32) and per round
`lengths` (int64), oldest round first. `load_replay` checks every array against the learner's sizes; a file
that does not match is a `CheckpointError` naming what is wrong.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from sacbot.checkpoint.archive import CheckpointError
from sacbot.checkpoint.atomic import atomic_write_bytes

STEP_ARRAYS = ("obs", "next_obs", "action", "reward", "done", "hidden")


def save_replay(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Atomically replace `path` with the arrays of `SequenceReplay.export_rounds`."""
    buffer = io.BytesIO()
    named: dict[str, Any] = {name: arrays[name] for name in (*STEP_ARRAYS, "lengths")}
    np.savez(buffer, **named)
    atomic_write_bytes(path, buffer.getvalue())


def load_replay(path: Path, stored_dim: int, action_dim: int, hidden_dim: int) -> dict[str, np.ndarray]:
    """The arrays in `path`, checked against the sizes (`stored_dim`: `NetworkSizes.stored_dim`);
    `CheckpointError` for a broken or foreign file."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise CheckpointError(f"{path}: not a readable replay file ({exc})") from None
    missing = sorted({*STEP_ARRAYS, "lengths"} - set(arrays))
    if missing:
        raise CheckpointError(f"{path}: replay file lacks {', '.join(missing)}")
    lengths = arrays["lengths"]
    if lengths.ndim != 1 or lengths.dtype.kind not in "iu" or (lengths.size and lengths.min() < 1):
        raise CheckpointError(f"{path}: replay file has bad round lengths")
    steps = int(lengths.sum())
    shapes = {
        "obs": (steps, stored_dim),
        "next_obs": (steps, stored_dim),
        "action": (steps, action_dim),
        "reward": (steps,),
        "done": (steps,),
        "hidden": (steps, hidden_dim),
    }
    for name, shape in shapes.items():
        value = arrays[name]
        if value.shape != shape or value.dtype != np.float32:
            raise CheckpointError(
                f"{path}: replay array {name} is {value.dtype}{list(value.shape)}, "
                f"expected float32{list(shape)}"
            )
        if not np.isfinite(value).all():
            raise CheckpointError(f"{path}: replay array {name} holds NaN or infinity")
    return arrays


__all__ = ["load_replay", "save_replay"]
