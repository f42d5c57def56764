"""The one atomic writer for every piece of state on disk (checkpoints, round counters, small JSON files).
(JSONL logs are appended, not replaced: `sacbot.jsonl`.)

A temporary file in the target's own folder (so the rename never crosses a filesystem) is written, flushed and
fsynced, renamed over the target, and then the folder is fsynced so the rename itself survives a power cut.
A kill at any moment leaves either the old file or the new one, never a mix; at worst a stale temporary file
named `.<target>.<random>.sacbot-tmp` stays behind, and the next write of the same target removes it once it
is an hour old (`remove_stale_temps`).
"""

from __future__ import annotations

import glob
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

TEMP_SUFFIX = ".sacbot-tmp"
STALE_AFTER_S = 3600.0  # a temporary file this old has no live writer


def _current_umask() -> int:
    # There is no read-only getter; set and restore once at import, before any thread of ours exists.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def fsync_folder(folder: Path) -> None:
    if os.name != "posix":  # Windows cannot open a folder for fsync; its rename is already durable enough.
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], None]) -> None:
    """Call `write(file)` on a seekable binary temporary file, then atomically put it at `path`.

    The target's folder is created when missing. The new file keeps the old one's permissions, else gets the
    usual umask-derived ones (not mkstemp's 0600). On any error the temporary file is removed and the target
    is untouched.
    """
    target = Path(path)
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=TEMP_SUFFIX)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        if os.name == "posix":
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_folder(folder)
    remove_stale_temps(folder, target.name)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Atomically replace `path` with `data`."""

    def write(handle: IO[bytes]) -> None:
        handle.write(data)

    atomic_write(path, write)


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """Atomically replace `path` with `text` (no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Atomically replace `path` with `obj` as JSON plus a trailing newline (e.g. round_counter.json)."""
    atomic_write_text(path, json.dumps(obj, sort_keys=True) + "\n")


def remove_stale_temps(
    folder: str | os.PathLike[str], name: str | None = None, older_than_s: float = STALE_AFTER_S
) -> list[Path]:
    """Remove the temporary files that killed writers of `name` (every target by default) left in `folder`,
    if older than `older_than_s`; returns them. The age threshold keeps a live writer's temporary file safe.
    """
    removed: list[Path] = []
    cutoff = time.time() - older_than_s
    pattern = f".{glob.escape(name)}.*{TEMP_SUFFIX}" if name is not None else f".*{TEMP_SUFFIX}"
    for entry in Path(folder).glob(pattern):
        try:
            if entry.is_file() and entry.stat().st_mtime < cutoff:
                entry.unlink()
                removed.append(entry)
        except FileNotFoundError:
            continue
    return removed
