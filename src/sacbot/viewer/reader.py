"""Reading a battle recording back (`read_recording`): a `.battle.gz` written by the recorder (or the official
one), or plain NDJSON, into a `Recording` of its observer messages, tolerating a file cut short by a crash."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path

from sacbot.errors import UserError
from sacbot.viewer.recording import RECORDED_TYPES


@dataclass
class Recording:
    """A recording read back: its lines (JSON text, one message each, in order) and whether it was cut short
    (no gzip trailer or a partial last line: the recorder stopped mid-game)."""

    path: Path
    lines: list[str]
    truncated: bool

    def messages(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.lines]

    def ndjson(self) -> bytes:
        return ("\n".join(self.lines) + "\n").encode() if self.lines else b""


_CHUNK = 1 << 20


def _inflate(path: Path) -> tuple[bytes, bool]:
    """All the data a gzip file holds (every member), tolerating a missing end: (data, complete)."""
    out: list[bytes] = []
    with open(path, "rb") as f:
        d = zlib.decompressobj(wbits=31)
        complete = False
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                break
            while chunk:
                try:
                    out.append(d.decompress(chunk))
                except zlib.error as exc:
                    raise UserError(f"{path} is not a readable recording: {exc}") from None
                if d.eof:
                    complete = True
                    chunk = d.unused_data
                    if chunk:  # another gzip member follows
                        d = zlib.decompressobj(wbits=31)
                        complete = False
                else:
                    complete = False
                    chunk = b""
        out.append(d.flush())
    return b"".join(out), complete


def read_recording(path: str | Path) -> Recording:
    """Read a `.battle.gz` (or plain NDJSON) recording; `UserError` for a missing, unreadable or empty one.

    A file cut short by a crash reads up to its last whole line. Every line must be a JSON object with a
    `type`; lines of other message types are skipped, as the official replay skips what it cannot use."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"no such recording: {p}")
    try:
        with open(p, "rb") as f:
            magic = f.read(2)
        if magic == b"\x1f\x8b":
            data, complete = _inflate(p)
        else:
            data, complete = p.read_bytes(), True
    except OSError as exc:
        raise UserError(f"cannot read {p}: {exc.strerror or exc}") from None
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise UserError(f"{p} is not a readable recording: not UTF-8 text") from None
    parts = text.split("\n")
    tail = parts.pop()  # "" when the data ends with a newline
    truncated = not complete or tail.strip() != ""
    lines: list[str] = []
    turns = 0
    for number, raw in enumerate(parts, 1):
        line = raw.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(
                f"{p} is not a readable recording: line {number} is not JSON ({exc.msg})"
            ) from None
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            raise UserError(f"{p} is not a readable recording: line {number} is not a message")
        if msg["type"] in RECORDED_TYPES:
            lines.append(line)
            turns += msg["type"] == "TickEventForObserver"
    if not turns:
        raise UserError(f"{p} holds no game turns: nothing to replay")
    return Recording(p, lines, truncated)
