"""Which weights `sacbot play` starts from: SACBOT_CHECKPOINT, else the slot order, else a fresh init.

The slot order is the checkpoint package's (`load_order`: the opponent's best, then the global best); a slot
that exists but cannot be used is skipped with a warning. An explicit checkpoint that cannot be used is an
error. Eval mode needs only the actor, so an actor-only export works there too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sacbot.agent.features import RadarMode
from sacbot.checkpoint import CheckpointMeta, load_checkpoint, load_for_game

ArraySpecs = dict[str, tuple[tuple[int, ...], str]]


@dataclass(frozen=True)
class StartWeights:
    arrays: dict[str, np.ndarray] | None  # None: a fresh init
    source: str  # the one line saying where they came from
    meta: CheckpointMeta | None = None


def radar_mode_for(setting: str | None, meta: CheckpointMeta | None) -> tuple[RadarMode, str]:
    """The radar mode to play with, and why: SACBOT_RADAR_MODE when set, else the one the checkpoint was
    trained with (a policy trained with a locked radar sees stale enemies under a spinning one), else spin."""
    if setting in ("spin", "lock"):
        return ("lock" if setting == "lock" else "spin"), "SACBOT_RADAR_MODE"
    trained = meta.extra.get("radar_mode") if meta is not None else None
    if trained in ("spin", "lock"):
        return ("lock" if trained == "lock" else "spin"), "the checkpoint's"
    return "spin", "the default"


def actor_specs(specs: ArraySpecs) -> ArraySpecs:
    return {name: spec for name, spec in specs.items() if name.startswith("actor.")}


def choose_start(
    explicit: Path | None, weights_dir: Path, opponent: str | None, specs: ArraySpecs, actor_only: bool
) -> StartWeights:
    wanted = actor_specs(specs) if actor_only else specs
    if explicit is not None:
        path = explicit.expanduser().resolve()
        arrays, meta = load_checkpoint(path, wanted, subset=actor_only)
        updates = meta.updates if meta is not None else "?"
        return StartWeights(arrays, f"loaded {path} (SACBOT_CHECKPOINT; updates {updates})", meta)
    loaded = load_for_game(weights_dir, opponent, wanted, subset=actor_only)
    if loaded is not None:
        updates = loaded.meta.updates if loaded.meta is not None else "?"
        source = f"loaded slot {loaded.slot} from {loaded.path} (updates {updates})"
        return StartWeights(loaded.arrays, source, loaded.meta)
    where = f"for opponent {opponent} " if opponent else ""
    return StartWeights(None, f"fresh init (no usable checkpoint {where}in {weights_dir})")
