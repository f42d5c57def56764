"""A weights folder's checkpoint slots: their paths, the load order for a game, the gated writer of bests.

The slots (the rest of a weights folder: `sacbot.rundir`):
    latest.zip                 full training state, for resume (written every save, ungated)
    best.zip                   the global best (gated)
    opponents/<Opponent>.zip   the best against one opponent (gated; one slot never touches another)
Load order for a game against opponent X: opponents/X.zip, then best.zip, then a fresh random init.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sacbot.checkpoint.archive import (
    ArraySpecs,
    CheckpointError,
    CheckpointMeta,
    load_checkpoint,
    save_checkpoint,
)
from sacbot.checkpoint.gate import GateDecision, decide
from sacbot.errors import UserError
from sacbot.rundir import BEST, LATEST, OPPONENTS_DIR, SLOT_SUFFIX, WeightsPaths

_OPPONENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_RESERVED = (
    {LATEST, BEST}
    | {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(10)}
    | {f"lpt{i}" for i in range(10)}
)

Warn = Callable[[str], None]


def _stderr(line: str) -> None:
    print(f"sacbot: {line}", file=sys.stderr, flush=True)


def validate_opponent_name(name: str) -> str:
    """An opponent key usable as a file name: letters, digits, `_ . -`; no paths, no reserved names."""
    if not _OPPONENT.match(name) or name.endswith(".") or ".." in name or name.lower() in _RESERVED:
        raise UserError(
            f"invalid opponent name {name!r}: use letters, digits, '_', '.', '-' (at most 64, no path parts, "
            f"not {BEST!r} or {LATEST!r})",
            exit_code=2,
        )
    return name


def latest_path(weights_dir: str | os.PathLike[str]) -> Path:
    return WeightsPaths.of(weights_dir).latest


def best_path(weights_dir: str | os.PathLike[str]) -> Path:
    return WeightsPaths.of(weights_dir).best


def opponent_best_path(weights_dir: str | os.PathLike[str], opponent: str) -> Path:
    return WeightsPaths.of(weights_dir).opponent(validate_opponent_name(opponent))


def slot_path(weights_dir: str | os.PathLike[str], slot: str) -> Path:
    """`latest`, `best`, or an opponent name."""
    if slot == LATEST:
        return latest_path(weights_dir)
    if slot == BEST:
        return best_path(weights_dir)
    return opponent_best_path(weights_dir, slot)


def slot_label(path: str | os.PathLike[str]) -> str:
    """The slot name a path stands for: `best`, `latest`, `opponents/<X>`, else the file name."""
    target = Path(path)
    if target.parent.name == OPPONENTS_DIR and target.suffix == SLOT_SUFFIX:
        return f"{OPPONENTS_DIR}/{target.stem}"
    return target.stem if target.suffix == SLOT_SUFFIX else target.name


def list_slots(weights_dir: str | os.PathLike[str]) -> list[tuple[str, Path]]:
    """Existing slots in display order: latest, best, then opponents by name."""
    folder = WeightsPaths.of(weights_dir)
    found = [(name, folder.slot(name)) for name in (LATEST, BEST) if folder.slot(name).is_file()]
    if folder.opponents.is_dir():
        found += [
            (f"{OPPONENTS_DIR}/{p.stem}", p)
            for p in sorted(folder.opponents.glob("*" + SLOT_SUFFIX))
            if p.is_file()
        ]
    return found


def load_order(weights_dir: str | os.PathLike[str], opponent: str | None) -> list[Path]:
    """Candidates for a game against `opponent`, most specific first; a fresh init follows when none loads."""
    order = [opponent_best_path(weights_dir, opponent)] if opponent else []
    return order + [best_path(weights_dir)]


@dataclass(frozen=True)
class LoadedCheckpoint:
    path: Path
    slot: str
    arrays: dict[str, np.ndarray]
    meta: CheckpointMeta | None


def load_for_game(
    weights_dir: str | os.PathLike[str],
    opponent: str | None,
    specs: ArraySpecs | None = None,
    *,
    subset: bool = False,
    warn: Warn = _stderr,
) -> LoadedCheckpoint | None:
    """The first slot of `load_order` that loads and matches `specs`; None means start from a fresh init.

    A slot that exists but cannot be used (corrupt, other network sizes) is skipped with a warning, so a bad
    file never stops a game.
    """
    for path in load_order(weights_dir, opponent):
        if not path.is_file():
            continue
        try:
            arrays, meta = load_checkpoint(path, specs, subset=subset)
        except CheckpointError as exc:
            warn(f"warning: skipping {slot_label(path)}: {exc}")
            continue
        return LoadedCheckpoint(path, slot_label(path), arrays, meta)
    return None


@contextlib.contextmanager
def _slot_lock(path: Path) -> Iterator[None]:
    """Serialise read-compare-write on one slot across processes (POSIX flock; freed if the holder dies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows: the rename is still atomic, only concurrent offers are not serialised
        yield
        return
    fd = os.open(path.parent / f".{path.name}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@dataclass(frozen=True)
class PromoteResult:
    promoted: bool
    reason: str
    path: Path
    forced: bool = False


def _set_aside(path: Path) -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    aside = path.with_name(f"{path.name}.unreadable-{stamp}")
    os.replace(path, aside)
    return aside


def promote(
    path: str | os.PathLike[str],
    arrays: Mapping[str, np.ndarray],
    meta: CheckpointMeta,
    score: float,
    score_kind: str,
    *,
    force: bool = False,
    warn: Warn = _stderr,
) -> PromoteResult:
    """Gate a candidate into the best slot at `path` and store it atomically if it wins (or `force`).

    The stored archive carries `score`/`score_kind` in its meta, so the decision survives restarts. A stored
    archive that cannot be read is renamed aside (`<slot>.zip.unreadable-<time>`, never deleted), ranks -inf.
    """
    target = Path(path)
    label = slot_label(target)
    with _slot_lock(target):
        exists = target.is_file()
        stored: CheckpointMeta | None = None
        unreadable = ""
        if exists:
            try:
                _, stored = load_checkpoint(target)
            except CheckpointError as exc:
                aside = _set_aside(target)
                warn(f"warning: the stored {label} could not be read and was kept as {aside.name}: {exc}")
                exists, unreadable = False, f" (the stored archive was unreadable, kept as {aside.name})"
        decision: GateDecision = decide(score, score_kind, stored, exists)
        reason = decision.reason + unreadable
        if not decision.replace and not force:
            return PromoteResult(False, reason, target)
        if not decision.replace:
            warn(f"warning: --force overrides the gate for {label}: {reason}")
        save_checkpoint(target, arrays, meta.with_score(score, score_kind))
    warn(f"stored new {label}: score {score:g} ({score_kind}) in {target}")
    return PromoteResult(True, reason, target, forced=not decision.replace)


def offer_best(
    path: str | os.PathLike[str],
    arrays: Mapping[str, np.ndarray],
    meta: CheckpointMeta,
    score: float,
    score_kind: str,
) -> bool:
    """The gate for training loops: store the candidate at `path` only if it beats the stored best."""
    return promote(path, arrays, meta, score, score_kind).promoted
