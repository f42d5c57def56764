"""A run folder to fine-tune an actor archive in (docs/learning.md, "Surf shaping").

    python scripts/actor_start.py RUN_FOLDER [--from ARCHIVE] [--seed N]

Writes RUN_FOLDER/latest.zip: the archive's actor and temperature (the shipped actor by default) over a fresh
trainer of the archive's network sizes (fresh critics, targets and optimisers, seeded by `--seed`), with the
archive's env-step and update counters, so `sacbot train-fast --out RUN_FOLDER` resumes from it as from its
own run: schedules that count updates (the teacher's movement term from update 60,000) stand where the actor
left them. Its meta is the archive's, marked a full checkpoint, without the score. An existing latest.zip is
never overwritten.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.agent.trainer_state import state_arrays
from sacbot.checkpoint import latest_path, load_checkpoint, read_meta, save_checkpoint
from sacbot.errors import UserError
from sacbot.runtime.startup import SHIPPED_ACTOR, network_sizes_for
from sacbot.settings import load_sacbot_settings


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("run", type=Path)
    parser.add_argument("--from", dest="archive", type=Path, default=SHIPPED_ACTOR)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        target = latest_path(args.run)
        if target.exists():
            raise UserError(f"{target} exists: this writes a new run folder only")
        meta = read_meta(args.archive)
        if meta is None:
            raise UserError(f"{args.archive}: no metadata to take the network sizes and counters from")
        trainer = SacTrainer(
            TrainerConfig(sizes=network_sizes_for(load_sacbot_settings(), meta), seed=args.seed)
        )
        arrays = state_arrays(trainer)
        held, _ = load_checkpoint(args.archive)
        for name, array in held.items():
            if name not in arrays or arrays[name].shape != array.shape:
                raise UserError(f"{args.archive}: {name} does not fit its own network sizes")
            arrays[name] = array
        arrays["counters.env_steps"] = np.array(meta.env_steps, np.int64)
        arrays["counters.updates"] = np.array(meta.updates, np.int64)
        args.run.mkdir(parents=True, exist_ok=True)
        save_checkpoint(target, arrays, dataclasses.replace(meta, contents="full", score=None, score_kind=""))
    except (UserError, OSError) as exc:
        raise SystemExit(f"actor_start: {exc}") from None
    print(f"wrote {target}: {args.archive}'s actor at update {meta.updates}, fresh critics")


if __name__ == "__main__":
    main()
