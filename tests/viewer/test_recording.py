"""Recording: the official recorder's format, written off the turn's path, readable after a crash."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sacbot.errors import UserError
from sacbot.viewer.reader import read_recording
from sacbot.viewer.recording import RECORDED_TYPES, RecordingWriter

from .viewer_support import DEBUG_SVG, Played

NAME = re.compile(r"game-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d(-\d+)?\.battle\.gz")


@pytest.fixture(scope="module")
def played(
    tmp_path_factory: pytest.TempPathFactory, shared_game: Callable[[pytest.TempPathFactory], Played]
) -> Played:
    return shared_game(tmp_path_factory)


def test_a_recording_is_every_observer_message_of_the_game_as_sent(played: Played) -> None:
    assert NAME.fullmatch(played.path.name)
    with gzip.open(played.path, "rt") as f:  # a plain gzip reader takes it: one member, a proper trailer
        lines = f.read().splitlines()
    # Exactly the texts the observer got, less the handshake and bot lists, in the same order.
    sent = [t for t in played.observed if json.loads(t)["type"] in RECORDED_TYPES]
    assert lines == sent
    assert {json.loads(t)["type"] for t in played.observed} - RECORDED_TYPES == {
        "ServerHandshake",
        "BotListUpdate",
    }
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds[0] == "GameStartedEventForObserver" and kinds[-1] == "GameEndedEventForObserver"
    compact = [k for i, k in enumerate(kinds) if k != "TickEventForObserver" or kinds[i - 1] != k]
    assert compact == [
        "GameStartedEventForObserver",
        *(["RoundStartedEvent", "TickEventForObserver", "RoundEndedEventForObserver"] * 2),
        "GameEndedEventForObserver",
    ]
    rec = read_recording(played.path)
    assert rec.lines == lines and not rec.truncated


def test_games_get_their_own_files_even_within_one_second(
    tmp_path: Path, record_game: Callable[..., Played]
) -> None:
    first = record_game(tmp_path, rounds=1, stop_after_turns=5)
    second = record_game(tmp_path, rounds=1, stop_after_turns=5)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and all(NAME.fullmatch(n) for n in names)
    assert first.path != second.path


def test_a_stopped_game_ends_with_game_aborted(tmp_path: Path, record_game: Callable[..., Played]) -> None:
    played = record_game(tmp_path, rounds=3, stop_after_turns=40)
    messages = [json.loads(line) for line in read_recording(played.path).lines]
    assert messages[-1]["type"] == "GameAbortedEvent"
    assert 40 <= sum(m["type"] == "TickEventForObserver" for m in messages) <= 41  # the turn in flight


def test_the_end_of_a_round_is_flushed_at_once(tmp_path: Path, record_game: Callable[..., Played]) -> None:
    """With no periodic flush, the file holds round 1 whole as soon as round 2 starts: a crash from then on
    loses nothing of it."""
    seen: dict[str, Any] = {}

    def on_tick(writer: RecordingWriter, text: str) -> None:
        if "rec" in seen or '"roundNumber":2' not in text:
            return
        # This runs inside the arena's turn: wait for the writer thread (never on it) to flush round 1.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            rec = read_recording(writer.files[0]) if writer.files else None
            if rec is not None and any(
                line.startswith('{"type":"RoundEndedEventForObserver"') for line in rec.lines
            ):
                seen["rec"] = rec
                return
            time.sleep(0.01)
        seen["rec"] = None

    record_game(tmp_path, rounds=2, flush_s=3600.0, on_tick=on_tick)
    rec = seen["rec"]
    assert rec is not None, "round 1 was not flushed within 5 s of its end"
    assert rec.truncated  # read mid-game: no gzip trailer yet
    kinds = [json.loads(line)["type"] for line in rec.lines]
    assert kinds[0] == "GameStartedEventForObserver"
    assert kinds.index("RoundEndedEventForObserver") == kinds.index("RoundStartedEvent") + 1 + sum(
        k == "TickEventForObserver" for k in kinds[: kinds.index("RoundEndedEventForObserver")]
    )


def _read_like_a_user(path: Path) -> list[dict[str, Any]]:
    """gzip + json per line, as anyone would; only the cut tail may fail: a missing gzip end (EOFError, which
    takes the reader's last buffer with it) or an unfinished last line."""
    messages: list[dict[str, Any]] = []
    with gzip.open(path, "rb") as f:
        try:
            for line in f:
                if not line.endswith(b"\n"):
                    break  # the cut tail
                messages.append(json.loads(line))
        except EOFError:  # "Compressed file ended before the end-of-stream marker was reached"
            pass
    return messages


def test_killing_the_arena_mid_game_leaves_a_readable_file(tmp_path: Path) -> None:
    record = tmp_path / "rec"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sacbot",
            "arena",
            "serve",
            "--port",
            "0",
            "--tps",
            "300",
            "--record",
            str(record),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    bots: list[subprocess.Popen[bytes]] = []
    try:
        assert server.stdout is not None
        url = re.search(r"ws://\S+", server.stdout.readline())
        assert url is not None
        bots = [
            subprocess.Popen(
                [sys.executable, "-m", "sacbot.bench.benchbot"],
                env=dict(os.environ, SERVER_URL=url.group(0), BOT_NAME=f"Bench{i}", BOT_VERSION="1.0"),
            )
            for i in range(2)
        ]
        from sacbot.arena.controller import play_game
        from sacbot.engine import game_setup_for

        setup = game_setup_for("1v1", number_of_rounds=1000)
        game = threading.Thread(
            target=lambda: _quietly(play_game, url.group(0), setup, ["Bench0", "Bench1"]), daemon=True
        )
        game.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            files = list(record.glob("*.battle.gz"))
            if files and files[0].stat().st_size > 20_000:  # several flushes in
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the recording never grew")
        server.send_signal(signal.SIGKILL)
        server.wait(10)
    finally:
        procs: list[subprocess.Popen[Any]] = [server, *bots]
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    (path,) = record.glob("*.battle.gz")
    messages = _read_like_a_user(path)
    assert messages[0]["type"] == "GameStartedEventForObserver"
    assert sum(m["type"] == "TickEventForObserver" for m in messages) > 100
    assert {m["type"] for m in messages} <= RECORDED_TYPES
    rec = read_recording(path)  # ours reads it too, up to the last whole line, and says it was cut short
    assert rec.truncated
    assert [json.loads(line) for line in rec.lines[: len(messages)]] == messages


def _quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # the server is killed under it
        pass


def test_debug_graphics_reach_observers_only_for_bots_that_may_debug(
    tmp_path: Path, record_game: Callable[..., Played]
) -> None:
    def states(played: Played) -> list[dict[str, Any]]:
        out = []
        for line in read_recording(played.path).lines:
            msg = json.loads(line)
            if msg["type"] == "TickEventForObserver":
                out.extend(msg["botStates"])
        return out

    # The bot paints whatever it is told; without the controller's BotPolicyUpdate, observers get none of it.
    silent = record_game(tmp_path / "a", rounds=1, painter="Corners", paint_always=True, enable_painter=False)
    assert not any("debugGraphics" in s or "isDebuggingEnabled" in s for s in states(silent))
    # BotPolicyUpdate debuggingEnabled: the bot's ticks say so (the official API paints only then) and
    # observers get its SVG.
    enabled = record_game(tmp_path / "b", rounds=1, painter="Corners")
    corners = [s for s in states(enabled) if s["name"] == "Corners"]
    fire = [s for s in states(enabled) if s["name"] == "Fire"]
    # (The update arrives after the game's first turn went out: it counts from the second on.)
    assert not corners[0].get("isDebuggingEnabled")
    assert all(s.get("isDebuggingEnabled") for s in corners[1:])
    assert all(s.get("debugGraphics") == DEBUG_SVG for s in corners[3:])
    assert not any("isDebuggingEnabled" in s or "debugGraphics" in s for s in fire)
    # --debug-graphics: every bot may.
    everyone = record_game(
        tmp_path / "c", rounds=1, painter="Corners", debug_graphics=True, enable_painter=False
    )
    assert all(s.get("isDebuggingEnabled") for s in states(everyone))


def test_bad_recordings_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such recording"):
        read_recording(tmp_path / "missing.battle.gz")
    bad = tmp_path / "bad.battle.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage that is no deflate stream at all")
    with pytest.raises(UserError, match="not a readable recording"):
        read_recording(bad)
    not_json = tmp_path / "text.battle.gz"
    not_json.write_bytes(gzip.compress(b'{"type":"TickEventForObserver"}\nnot json\n'))
    with pytest.raises(UserError, match="line 2 is not JSON"):
        read_recording(not_json)
    empty = tmp_path / "empty.battle.gz"
    empty.write_bytes(gzip.compress(b'{"type":"BotListUpdate","bots":[]}\n'))
    with pytest.raises(UserError, match="no game turns"):
        read_recording(empty)


def test_a_cut_gzip_stream_reads_to_its_last_whole_line(played: Played, tmp_path: Path) -> None:
    whole = read_recording(played.path).lines
    # What a crash leaves: the stream up to some flush, then part of the next deflate block.
    body = ("\n".join(whole) + "\n").encode()
    comp = zlib.compressobj(6, zlib.DEFLATED, 31)
    half = len(body) // 2
    flushed = comp.compress(body[:half]) + comp.flush(zlib.Z_SYNC_FLUSH)
    cut = tmp_path / "cut.battle.gz"
    cut.write_bytes(flushed + comp.compress(body[half:])[:100])
    rec = read_recording(cut)
    assert rec.truncated
    # Every whole line up to the flush, maybe a few more from the cut block, never a partial one.
    flushed_lines = body[:half].decode().count("\n")
    assert flushed_lines <= len(rec.lines) < len(whole)
    assert rec.lines == whole[: len(rec.lines)]


def test_an_unwritable_folder_is_one_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UserError, match="--record: cannot write to"):
        RecordingWriter(blocker / "sub")
