"""Battle recordings in the official recorder's format: `game-YYYY-MM-DD-HH-MM-SS.battle.gz`, gzip-compressed
newline-delimited JSON, one observer message per line exactly as the server sent it
(GameStartedEventForObserver, RoundStartedEvent, TickEventForObserver, RoundEndedEventForObserver, then
GameEndedEventForObserver or GameAbortedEvent). No handshake and no bot-list lines.

`RecordingWriter` is the arena's `GameRecorder`: the arena hands it the text it already encoded for observers,
and a writer thread compresses and writes it, so the turn loop only appends to a queue. The file is written
under its final name and the gzip stream is flushed with Z_SYNC_FLUSH at every round end and at least every
`flush_s` seconds, so a crash leaves a file that reads back up to its last flush (`read_recording`
tolerates the missing gzip trailer and a cut last line).
"""

from __future__ import annotations

import collections
import datetime as dt
import gzip
import json
import logging
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from sacbot.errors import UserError

log = logging.getLogger(__name__)

RECORDED_TYPES = frozenset(
    {
        "GameStartedEventForObserver",
        "RoundStartedEvent",
        "TickEventForObserver",
        "RoundEndedEventForObserver",
        "GameEndedEventForObserver",
        "GameAbortedEvent",
    }
)
SUFFIX = ".battle.gz"
DEFAULT_FLUSH_S = 1.0
# zlib level 1: the ticks' JSON shrinks to about 16% at ~4 ms of CPU per MB (level 6 reaches 12.5% but costs
# three times as much CPU, which a busy arena feels).
DEFAULT_LEVEL = 1

_START = object()  # queue markers between the arena and the writer thread
_END = object()
_ROUND_ENDED = '{"type":"RoundEndedEventForObserver"'


def recording_name(when: dt.datetime) -> str:
    """The official recorder's file name for a game that starts at `when` (local time)."""
    return f"game-{when:%Y-%m-%d-%H-%M-%S}{SUFFIX}"


def _new_path(directory: Path, when: dt.datetime) -> Path:
    """`game-<time>.battle.gz`, or `game-<time>-2.battle.gz`, ... when games start in the same second."""
    base = recording_name(when)[: -len(SUFFIX)]
    path = directory / f"{base}{SUFFIX}"
    n = 2
    while path.exists():
        path = directory / f"{base}-{n}{SUFFIX}"
        n += 1
    return path


@dataclass
class WriterStats:
    games: int = 0
    lines: int = 0
    bytes_in: int = 0  # uncompressed JSON, newlines included
    flushes: int = 0
    files: list[Path] = field(default_factory=list)


class RecordingWriter:
    """Writes one `.battle.gz` file per game into `directory` from a background thread.

    Use it as the arena's recorder (`ArenaServer(recorder=...)`, `run_battle(recorder=...)`) and `close()` it
    when the server has stopped. A directory that cannot be written is a `UserError` at construction; a write
    that fails later (disk full) is logged, ends that recording and is raised again by `close()`.
    """

    def __init__(
        self, directory: str | Path, *, flush_s: float = DEFAULT_FLUSH_S, level: int = DEFAULT_LEVEL
    ) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            probe = self.directory / ".sacbot-record-probe"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise UserError(f"--record: cannot write to {self.directory}: {exc.strerror or exc}", 2) from None
        self.flush_s = flush_s
        self.level = level
        self.stats = WriterStats()
        self._queue: collections.deque[object] = collections.deque()
        self._wake = threading.Event()
        self._closing = False
        self._error: OSError | None = None
        self._raw: IO[bytes] | None = None
        self._gz: gzip.GzipFile | None = None
        self._thread = threading.Thread(target=self._main, name="sacbot-recorder", daemon=True)
        self._thread.start()

    # ---- GameRecorder: called on the arena's loop, only queue ------------------------------------------

    def start_game(self) -> None:
        self._queue.append(_START)
        self._wake.set()  # the file exists as the game starts

    def record(self, text: str) -> None:
        self._queue.append(text)
        if text.startswith(_ROUND_ENDED):
            self._wake.set()  # a round's end is flushed at once

    def end_game(self) -> None:
        self._queue.append(_END)
        self._wake.set()

    # ---- the rest ---------------------------------------------------------------------------------------

    @property
    def files(self) -> list[Path]:
        """The recordings written (or being written), in order."""
        return list(self.stats.files)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until everything queued so far is written and flushed (tests, and before reading back)."""
        done = threading.Event()
        self._queue.append(done)
        self._wake.set()
        done.wait(timeout)

    def close(self) -> None:
        """Write what is queued, finish the open file (its gzip trailer) and stop the thread."""
        self._closing = True
        self._wake.set()
        self._thread.join()
        if self._error is not None:
            raise UserError(
                f"--record: writing {self.directory} failed: {self._error.strerror or self._error}"
            )

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _main(self) -> None:
        queue = self._queue
        while True:
            closing = self._closing
            lines: list[str] = []
            flush = False
            while queue:
                item = queue.popleft()
                if isinstance(item, str):
                    lines.append(item)
                    if item.startswith(_ROUND_ENDED):
                        flush = True
                    continue
                self._write(lines)
                lines = []
                if item is _START:
                    self._open()
                elif item is _END:
                    self._finish()
                elif isinstance(item, threading.Event):
                    self._sync()
                    item.set()
            self._write(lines)
            if lines or flush:
                self._sync()
            if closing:
                self._finish()
                return
            self._wake.wait(self.flush_s)
            self._wake.clear()

    def _open(self) -> None:
        self._finish()  # a game that never ended (aborted without a message) is closed as it is
        if self._error is not None:
            return
        path = _new_path(self.directory, dt.datetime.now())
        try:
            raw = open(path, "xb")  # noqa: SIM115 - closed in _finish
        except OSError as exc:
            self._fail(exc)
            return
        self._raw = raw
        # No file name and no time stamp in the header, as the official recorder's GZIPOutputStream.
        self._gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=self.level, mtime=0)
        self.stats.games += 1
        self.stats.files.append(path)
        log.info("recording the game into %s", path)

    def _write(self, lines: list[str]) -> None:
        gz = self._gz
        if not lines or gz is None:
            return
        data = ("\n".join(lines) + "\n").encode()
        try:
            gz.write(data)
        except OSError as exc:
            self._fail(exc)
            return
        self.stats.lines += len(lines)
        self.stats.bytes_in += len(data)

    def _sync(self) -> None:
        """Z_SYNC_FLUSH: everything written so far decompresses from the file as it is."""
        gz, raw = self._gz, self._raw
        if gz is None or raw is None:
            return
        try:
            gz.flush(zlib.Z_SYNC_FLUSH)
            raw.flush()
        except OSError as exc:
            self._fail(exc)
            return
        self.stats.flushes += 1

    def _finish(self) -> None:
        gz, raw = self._gz, self._raw
        self._gz = self._raw = None
        try:
            if gz is not None:
                gz.close()
            if raw is not None:
                raw.close()
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        if self._error is None:
            self._error = exc
            log.error("recording into %s failed: %s; recording stops", self.directory, exc)
        gz, raw = self._gz, self._raw
        self._gz = self._raw = None
        for f in (gz, raw):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        # Later games are not recorded: drop what the arena queues from now on.
        self._queue.clear()


# ---- reading ------------------------------------------------------------------------------------------


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
