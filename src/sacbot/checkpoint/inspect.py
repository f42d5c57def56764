"""What `sacbot checkpoint show` reports about a file or a weights folder (the data; the CLI renders it)."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sacbot.checkpoint.archive import CheckpointError, CheckpointMeta, load_checkpoint
from sacbot.checkpoint.slots import list_slots


@dataclass(frozen=True)
class SlotInfo:
    slot: str
    path: Path
    error: str | None  # None when the archive loads cleanly
    meta: CheckpointMeta | None
    arrays: int
    values: int
    age_s: float | None

    def to_json_dict(self) -> dict[str, Any]:
        meta = self.meta
        return {
            "slot": self.slot,
            "path": str(self.path),
            "ok": self.error is None,
            "error": self.error,
            "has_meta": meta is not None,
            "score": meta.score if meta else None,
            "score_kind": meta.score_kind if meta else None,
            "env_steps": meta.env_steps if meta else None,
            "updates": meta.updates if meta else None,
            "network_sizes": dict(meta.network_sizes) if meta else None,
            "opponent": meta.opponent if meta else None,
            "contents": meta.contents if meta else None,
            "created": meta.created if meta else None,
            "age_s": self.age_s,
            "arrays": self.arrays,
            "values": self.values,
        }


def _age_s(meta: CheckpointMeta | None, path: Path, now: dt.datetime) -> float | None:
    created = meta.created_datetime() if meta else None
    if created is not None and created.tzinfo is not None:
        return max(0.0, (now - created).total_seconds())
    try:  # the older layout has no creation time: the file's own time is the best guess
        return max(0.0, now.timestamp() - path.stat().st_mtime)
    except OSError:
        return None


def describe_file(path: Path, slot: str, now: dt.datetime | None = None) -> SlotInfo:
    now = now or dt.datetime.now(dt.UTC)
    try:
        arrays, meta = load_checkpoint(path)
    except CheckpointError as exc:
        return SlotInfo(slot, path, str(exc), None, 0, 0, _age_s(None, path, now))
    values = int(sum(int(a.size) for a in arrays.values()))
    return SlotInfo(slot, path, None, meta, len(arrays), values, _age_s(meta, path, now))


def describe(path: str | os.PathLike[str]) -> list[SlotInfo]:
    """One row for a file, one per slot for a weights folder; unreadable archives become rows with `error`."""
    target = Path(path)
    if target.is_dir():
        return [describe_file(file, slot) for slot, file in list_slots(target)]
    if not target.exists():
        raise CheckpointError(f"{target}: no such file or folder")
    return [describe_file(target, "file")]


def human_age(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds:.0f}s"


def compact_sizes(sizes: dict[str, Any] | None) -> str:
    """The sizes a reader compares at a glance (integers, and the switches that are on), e.g.
    'state_dim=17 hidden=128 angle_inputs'."""
    if not sizes:
        return "-"
    counts = [f"{k}={v}" for k, v in sizes.items() if isinstance(v, int) and not isinstance(v, bool)]
    return " ".join(counts + [k for k, v in sizes.items() if v is True])
