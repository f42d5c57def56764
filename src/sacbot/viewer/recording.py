"""Battle recordings in the official recorder's format: `game-YYYY-MM-DD-HH-MM-SS.battle.gz`, gzip-compressed
newline-delimited JSON, one observer message per line exactly as the server sent it
(GameStartedEventForObserver, RoundStartedEvent, TickEventForObserver, RoundEndedEventForObserver, then
GameEndedEventForObserver or GameAbortedEvent). No handshake and no bot-list lines.

`RecordingWriter` is the arena's `GameRecorder`: the arena hands it the bytes it already encoded for
observers, and a writer thread compresses and writes them, so the turn loop only appends to a queue. The
file is written under its final name and the gzip stream is flushed with Z_SYNC_FLUSH at every round end and
at least every `flush_s` seconds, so a crash leaves a file that reads back up to its last flush
(`sacbot.viewer.reader.read_recording` tolerates the missing gzip trailer and a cut last line).

Commands that play games for the user record some of them: `SelectedGames` is the arena's recorder that writes
only the games it is armed for, named `game-<time>-<label>.battle.gz` (a campaign's `[record]` table,
`sacbot eval --record`), keeping the newest `keep_last`; `game_recorder` records one game
(`sacbot tournament --record`, in each game's process).
"""

from __future__ import annotations

import collections
import datetime as dt
import gzip
import logging
import os
import threading
import zlib
from collections.abc import Collection
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

_END = object()  # queue markers between the arena and the writer thread
_LABEL_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


@dataclass(frozen=True)
class _Start:
    label: str | None


_ROUND_ENDED = b'{"type":"RoundEndedEventForObserver"'


def recording_name(when: dt.datetime) -> str:
    """The official recorder's file name for a game that starts at `when` (local time)."""
    return f"game-{when:%Y-%m-%d-%H-%M-%S}{SUFFIX}"


def _new_path(directory: Path, when: dt.datetime, label: str | None = None) -> Path:
    """`game-<time>.battle.gz` (`game-<time>-<label>.battle.gz` with a label), or `...-2.battle.gz`, ... when
    games start in the same second."""
    base = recording_name(when)[: -len(SUFFIX)] + (f"-{label}" if label else "")
    path = directory / f"{base}{SUFFIX}"
    n = 2
    while path.exists():
        path = directory / f"{base}-{n}{SUFFIX}"
        n += 1
    return path


def writable_folder(directory: str | Path) -> Path:
    """`directory`, created if needed; a `UserError` when a file cannot be written there."""
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".sacbot-record-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise UserError(f"--record: cannot write to {folder}: {exc.strerror or exc}", 2) from None
    return folder


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
        self.directory = writable_folder(directory)
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

    def start_game(self, label: str | None = None) -> None:
        """A new file for the game that starts; `label` (letters, digits, `-_.`) goes into its name."""
        if label is not None:
            label = "".join(c if c in _LABEL_OK else "_" for c in label) or None
        self._queue.append(_Start(label))
        self._wake.set()  # the file exists as the game starts

    def record(self, data: bytes) -> None:
        self._queue.append(data)
        if data.startswith(_ROUND_ENDED):
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
            lines: list[bytes] = []
            flush = False
            while queue:
                item = queue.popleft()
                if isinstance(item, bytes):
                    lines.append(item)
                    if item.startswith(_ROUND_ENDED):
                        flush = True
                    continue
                self._write(lines)
                lines = []
                if isinstance(item, _Start):
                    self._open(item.label)
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

    def _open(self, label: str | None) -> None:
        self._finish()  # a game that never ended (aborted without a message) is closed as it is
        if self._error is not None:
            return
        path = _new_path(self.directory, dt.datetime.now(), label)
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

    def _write(self, lines: list[bytes]) -> None:
        gz = self._gz
        if not lines or gz is None:
            return
        data = b"\n".join(lines) + b"\n"
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


class SelectedGames:
    """A `GameRecorder` that records only the games it is armed for, into one folder: `arm(kind, label)`
    before a game starts, `settle()` after it. The arena keeps one recorder for its life; a campaign (or
    `sacbot eval`) records the games of the `kinds` it was asked for ("eval", "chunk"), and with
    `keep_last` > 0 only the newest that many recordings stay."""

    def __init__(self, writer: RecordingWriter, kinds: Collection[str], keep_last: int = 0) -> None:
        self.writer = writer
        self.kinds = frozenset(kinds)
        self.keep_last = keep_last
        self._label: str | None = None
        self._armed = False
        self._on = False  # the game in progress is being recorded

    @classmethod
    def open(cls, directory: str | Path, kinds: Collection[str], keep_last: int = 0) -> SelectedGames:
        """A writer into `directory` (a `UserError` when it cannot be written) behind the selection."""
        return cls(RecordingWriter(directory), kinds, keep_last)

    def arm(self, kind: str, label: str) -> bool:
        """Record the next game if `kind` is selected; whether it will be."""
        self._label, self._armed = label, kind in self.kinds
        return self._armed

    def settle(self) -> None:
        """After a game: record no more until armed again, write the file out, delete the oldest beyond
        `keep_last`."""
        was_armed, self._armed = self._armed, False
        if was_armed:
            self.writer.flush()
            prune_recordings(self.writer.directory, self.keep_last)

    def close(self) -> None:
        self.writer.close()

    # ---- GameRecorder ----
    def start_game(self) -> None:
        self._on = self._armed
        if self._on:
            self.writer.start_game(self._label)

    def record(self, data: bytes) -> None:
        if self._on:
            self.writer.record(data)

    def end_game(self) -> None:
        if self._on:
            self._on = False
            self.writer.end_game()


def game_recorder(directory: str, label: str) -> SelectedGames:
    """A recorder of the next game only, into `directory` as `game-<time>-<label>.battle.gz`; close it after
    the game. `functools.partial(game_recorder, directory)` is the picklable factory that `sacbot
    tournament --record` hands to its game processes."""
    recorder = SelectedGames.open(directory, ("game",))
    recorder.arm("game", label)
    return recorder


def recordings_in(directory: Path, contains: str = "") -> list[Path]:
    """The `.battle.gz` files in `directory` whose names hold `contains`, oldest first (by modification
    time, then name: names start with the game's start time)."""
    if not directory.is_dir():
        return []
    found = [p for p in directory.glob(f"*{SUFFIX}") if contains in p.name and p.is_file()]

    def age(p: Path) -> tuple[float, str]:
        try:
            return (p.stat().st_mtime, p.name)
        except OSError:
            return (0.0, p.name)

    return sorted(found, key=age)


def prune_recordings(directory: Path, keep_last: int) -> list[Path]:
    """Delete all but the newest `keep_last` recordings in `directory` (0 keeps them all); the deleted."""
    if keep_last <= 0:
        return []
    old = recordings_in(directory)[:-keep_last]
    for path in old:
        path.unlink(missing_ok=True)
    return old
