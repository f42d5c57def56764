"""The commands: `sacbot replay`, `sacbot render`, `--record` on `sacbot arena run`, and their one-line
errors."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image, ImageSequence

from sacbot.viewer.reader import read_recording

from .viewer_support import Played


@pytest.fixture(scope="module")
def played(
    tmp_path_factory: pytest.TempPathFactory, shared_game: Callable[[pytest.TempPathFactory], Played]
) -> Played:
    return shared_game(tmp_path_factory)


def sacbot(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sacbot", *args], capture_output=True, text=True, timeout=timeout
    )


def one_error_line(result: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sacbot: error: ") and text in lines[0], lines


def test_replay_serves_the_page_and_the_recording(played: Played) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "sacbot", "replay", str(played.path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, line
        url = found.group(0)
        assert played.path.name in line
        with urllib.request.urlopen(url, timeout=5) as r:
            assert b'<canvas id="arena"' in r.read()
        with urllib.request.urlopen(url + "config.json", timeout=5) as r:
            config = json.load(r)
        assert config["mode"] == "replay" and config["title"] == played.path.name
        with urllib.request.urlopen(url + config["recording"], timeout=5) as r:
            assert r.read() == read_recording(played.path).ndjson()
        with urllib.request.urlopen(url + "style.json", timeout=5) as r:
            assert json.load(r)["defaults"]["bodyColor"] == "#001199"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_replay_and_render_errors_are_one_line(played: Played, tmp_path: Path) -> None:
    one_error_line(sacbot("replay", str(tmp_path / "none.battle.gz")), 1, "no such recording")
    corrupt = tmp_path / "corrupt.battle.gz"
    corrupt.write_bytes(gzip.compress(b'{"type":"GameStartedEventForObserver"}\n{oops\n'))
    one_error_line(sacbot("replay", str(corrupt)), 1, "line 2 is not JSON")
    one_error_line(
        sacbot("replay", str(played.path), "--port", "70000"), 2, "--port must be between 0 and 65535"
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        one_error_line(
            sacbot("replay", str(played.path), "--port", port), 2, f"cannot listen on 127.0.0.1:{port}"
        )
    one_error_line(sacbot("render", str(played.path), "--out", str(tmp_path / "a.png")), 2, ".gif or .mp4")
    one_error_line(sacbot("render", str(corrupt), "--out", str(tmp_path / "a.gif")), 1, "not JSON")
    blocker = tmp_path / "file"
    blocker.write_text("")
    one_error_line(
        sacbot("arena", "serve", "--port", "0", "--record", str(blocker)), 2, "--record: cannot write"
    )
    assert not list(tmp_path.glob("*.gif"))


def test_render_writes_a_gif(played: Played, tmp_path: Path) -> None:
    out = tmp_path / "clips" / "round2.gif"
    result = sacbot("render", str(played.path), "--out", str(out), "--round", "2", "--max-frames", "12")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        f"wrote {out}: 12 frames, 480x396, 15 fps (round 2 turn 1 to round 2 turn "
    )
    with Image.open(out) as gif:
        assert _frames(gif) == 12
    assert sorted(p.name for p in out.parent.iterdir()) == ["round2.gif"]  # no temporary file left


def test_arena_run_records_the_game(tmp_path: Path) -> None:
    bots = Path(__file__).resolve().parents[2] / "bots"
    record = tmp_path / "rec"
    env = dict(os.environ)
    result = subprocess.run(
        [sys.executable, "-m", "sacbot", "arena", "run", str(bots / "SpinBot"), str(bots / "Target")]
        + ["--rounds", "1", "--seed", "3", "--json", "--record", str(record)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["numberOfRounds"] == 1  # stdout stays the results alone
    (path,) = record.glob("game-*.battle.gz")
    assert f"recorded: {path}" in result.stderr
    kinds = [json.loads(line)["type"] for line in read_recording(path).lines]
    assert kinds[0] == "GameStartedEventForObserver" and kinds[-1] == "GameEndedEventForObserver"
    assert kinds.count("RoundEndedEventForObserver") == 1


def _frames(gif: Image.Image) -> int:
    return sum(1 for _ in ImageSequence.Iterator(gif))
