"""Checkpoints: the archive format, the one atomic writer, best-gating and the weights-folder slots.

    save_checkpoint(path, arrays, meta) -> CheckpointMeta | None       atomic; the one checkpoint writer
    load_checkpoint(path, specs=None, *, subset=False) -> (arrays, meta | None)   verified, never unpickles
    read_meta(path) -> CheckpointMeta | None                           meta.json only
    offer_best(path, arrays, meta, score, score_kind) -> bool          the gate (strictly greater wins)
    promote(path, arrays, meta, score, score_kind, *, force=False) -> PromoteResult
    latest_path / best_path / opponent_best_path / slot_path(weights_dir, ...) -> Path
    load_order(weights_dir, opponent) -> [Path]; load_for_game(weights_dir, opponent, specs, *, subset=False)
    atomic_write / atomic_write_bytes / atomic_write_text / atomic_write_json(path, ...)
    save_trainer(path, trainer, *, opponent=None, extra=None) -> CheckpointMeta     ungated (latest.zip)
    restore_trainer(path, trainer) -> CheckpointMeta | None            verified against trainer.array_specs()
    specs_of(arrays) -> specs; e.g. load_checkpoint(best, specs_of(trainer.actor_arrays()), subset=True)
Errors are `CheckpointError` (a `UserError`, exit code 1) naming what is wrong.
"""

from sacbot.checkpoint.archive import (
    ACTOR_PREFIX,
    FORMAT,
    TEMPERATURE,
    VERSION,
    ArraySpecs,
    CheckpointError,
    CheckpointMeta,
    actor_archive_specs,
    check_specs,
    in_actor_archive,
    load_checkpoint,
    read_meta,
    save_checkpoint,
    specs_of,
)
from sacbot.checkpoint.atomic import (
    atomic_write,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    remove_stale_temps,
)
from sacbot.checkpoint.gate import GateDecision, decide, rank
from sacbot.checkpoint.slots import (
    LoadedCheckpoint,
    PromoteResult,
    best_path,
    latest_path,
    list_slots,
    load_for_game,
    load_order,
    offer_best,
    opponent_best_path,
    promote,
    slot_label,
    slot_path,
    validate_opponent_name,
)
from sacbot.checkpoint.trainer_io import TrainerState, restore_trainer, save_trainer, trainer_meta

__all__ = [
    "ACTOR_PREFIX",
    "FORMAT",
    "TEMPERATURE",
    "VERSION",
    "ArraySpecs",
    "CheckpointError",
    "CheckpointMeta",
    "GateDecision",
    "LoadedCheckpoint",
    "PromoteResult",
    "actor_archive_specs",
    "atomic_write",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "best_path",
    "check_specs",
    "decide",
    "in_actor_archive",
    "latest_path",
    "list_slots",
    "load_checkpoint",
    "load_for_game",
    "load_order",
    "offer_best",
    "opponent_best_path",
    "promote",
    "rank",
    "read_meta",
    "remove_stale_temps",
    "save_checkpoint",
    "slot_label",
    "slot_path",
    "specs_of",
    "TrainerState",
    "restore_trainer",
    "save_trainer",
    "trainer_meta",
    "validate_opponent_name",
]
