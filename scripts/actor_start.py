"""A run folder to fine-tune an actor archive in (docs/learning.md, "Surf shaping").

    python scripts/actor_start.py RUN_FOLDER [--from ARCHIVE] [--seed N]

Writes RUN_FOLDER/latest.zip as `sacbot train-fast --start-actor ARCHIVE` does before its first step
(`sacbot.env.fast_saver.start_from_actor`): the archive's actor and temperature (the shipped actor by
default) over fresh critics seeded by `--seed`, its counters kept, so that `sacbot train-fast --out
RUN_FOLDER` resumes from it. The commands in docs/learning.md that use it came before `--start-actor`. An
existing latest.zip is never overwritten.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sacbot.checkpoint import latest_path
from sacbot.env.fast_saver import start_from_actor
from sacbot.errors import UserError
from sacbot.runtime.startup import SHIPPED_ACTOR
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
        args.run.mkdir(parents=True, exist_ok=True)
        meta = start_from_actor(args.run, args.archive, load_sacbot_settings(), args.seed)
    except (UserError, OSError) as exc:
        raise SystemExit(f"actor_start: {exc}") from None
    print(f"wrote {target}: {args.archive}'s actor at update {meta.updates}, fresh critics")


if __name__ == "__main__":
    main()
