"""The one module that appends, reads and tails JSONL files (one JSON object per line, append-only).

`append` writes a whole line in one `write` on an O_APPEND descriptor and fsyncs it, so a line is never
interleaved with another writer's and a kill tears at most the last line. The readers (`read`, `parse`,
`tail`, `Follower`) give back the object lines and pass over a torn last line, blank lines and foreign text,
never failing on them; `parse` and `read` count them, for whoever reports malformed lines. What a line means
is its record model's business (`sacbot.records`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sacbot.errors import UserError

Row = dict[str, Any]


def append(path: str | os.PathLike[str], record: Mapping[str, Any], *, allow_nan: bool = True) -> None:
    """Append `record` as one line (keys sorted), then fsync. The folder is created when missing.

    `allow_nan=False` refuses NaN and infinities (ValueError) instead of writing them.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record, sort_keys=True, allow_nan=allow_nan) + "\n").encode("utf-8")
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Lines:
    """A JSONL text read: its object lines in order, how many other non-blank lines it has (torn, not JSON,
    not an object), and whether it ends in a newline (False: its last line was torn, the next append would
    continue it)."""

    rows: list[Row] = field(default_factory=list)
    malformed: int = 0
    complete: bool = True


def _object(line: str | bytes) -> Row | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def parse(text: str) -> Lines:
    rows: list[Row] = []
    bad = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        obj = _object(line)
        if obj is None:
            bad += 1
        else:
            rows.append(obj)
    return Lines(rows, bad, not text or text.endswith("\n"))


def read_text(path: str | os.PathLike[str]) -> str | None:
    """A record file's text (undecodable bytes replaced), None when it does not exist; a `UserError` when it
    exists but cannot be read."""
    try:
        return Path(path).read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}", exit_code=1) from None


def read(path: str | os.PathLike[str]) -> Lines:
    """The whole file (undecodable bytes make malformed lines); a missing file reads as empty."""
    text = read_text(path)
    return Lines() if text is None else parse(text)


def tail(path: str | os.PathLike[str], max_bytes: int) -> list[Row]:
    """The object lines among the last `max_bytes` of the file (a line the cut falls in is left out); a
    missing or unreadable file has none."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            start = max(0, handle.tell() - max_bytes)
            handle.seek(start)
            data = handle.read()
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    if start > 0:
        lines = lines[1:]
    return [obj for line in lines if (obj := _object(line)) is not None]


class Follower:
    """The new complete lines of a growing file since the last `read` (it starts at the file's end then)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self._offset = self.path.stat().st_size
        except OSError:
            self._offset = 0

    def read(self) -> list[Row]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1  # a line still being written waits for its newline
        self._offset += end
        return [obj for line in data[:end].splitlines() if (obj := _object(line)) is not None]
