"""Turn on the critics' bullet inputs in a run folder's `latest.zip`, as a function-preserving widening.

    python scripts/add_bullet_inputs.py RUN

The critics' (and target critics') first layer gains `BULLET_INPUT_DIM` input columns of zeros between the
state inputs and the action (the layout `SacTrainer` builds with `NetworkSizes.bullet_inputs`), and Adam's
moments for that layer gain zeros likewise, so every Q value is what it was until training moves them. The
checkpoint's `network_sizes` then say `bullet_inputs: true`, so `sacbot train-fast --out RUN` (and `play`)
resume with the inputs on. The run's `replay.npz` is removed: its states were stored without the bullets,
which cannot be recovered; the resumed run fills its replay anew. The archive is rewritten atomically; nothing
happens when the inputs are already on. One error line and exit 2 for a folder without a readable checkpoint.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from sacbot.agent.sizes import BULLET_INPUT_DIM, NetworkSizes
from sacbot.checkpoint import latest_path
from sacbot.checkpoint.archive import CheckpointError, load_checkpoint, save_checkpoint
from sacbot.rundir import WeightsPaths

WIDENED = ("fc_in.weight", "fc_in.weight.exp_avg", "fc_in.weight.exp_avg_sq")


def widen(arrays: dict[str, np.ndarray], at: int) -> dict[str, np.ndarray]:
    """The arrays with `BULLET_INPUT_DIM` zero columns inserted at column `at` of every critic's first
    layer (weights, target weights, Adam moments); the rest unchanged."""
    out = dict(arrays)
    for name, array in arrays.items():
        critic = name.startswith(("critic", "target", "adam.critic."))
        if critic and name.endswith(WIDENED):
            zeros = np.zeros((array.shape[0], BULLET_INPUT_DIM), array.dtype)
            out[name] = np.concatenate([array[:, :at], zeros, array[:, at:]], 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a train-fast run folder (its latest.zip)")
    args = parser.parse_args(argv)
    path = latest_path(args.run)
    try:
        arrays, meta = load_checkpoint(path)
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if meta is None or meta.contents != "full":
        print(f"error: {path} holds no full training state", file=sys.stderr)
        return 2
    sizes = dict(meta.network_sizes)
    if sizes.get("bullet_inputs") is True:
        print(f"{path}: the bullet inputs are already on")
        return 0
    known = {k: v for k, v in sizes.items() if k in NetworkSizes.__dataclass_fields__}
    at = NetworkSizes(**known).input_dim
    save_checkpoint(path, widen(arrays, at), replace(meta, network_sizes={**sizes, "bullet_inputs": True}))
    replay = WeightsPaths(args.run).replay
    if replay.is_file():
        replay.unlink()
        print(f"removed {replay} (its states carry no bullet inputs)")
    print(f"{path}: the critics now read {BULLET_INPUT_DIM} bullet inputs after column {at} (zero weights)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
