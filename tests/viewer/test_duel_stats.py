"""`scripts/duel_stats.py` on a real recording: Gunner against Surfer on the embedded arena, two rounds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from sacbot.viewer.reader import read_recording

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=180, cwd=REPO)


def test_duel_stats_counts_every_shot_and_prints_whole_profiles(tmp_path: Path) -> None:
    record = tmp_path / "rec"
    played = _run(
        "-m", "sacbot", "arena", "run", "bots/Gunner", "bots/Surfer", "--rounds", "2", "--seed", "5",
        "--json", "--record", str(record),
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    (path,) = record.glob("game-*.battle.gz")
    names: dict[int, str] = {}
    fired: Counter[str] = Counter()
    for line in read_recording(path).lines:
        message = json.loads(line)
        if message["type"] == "GameStartedEventForObserver":
            names = {p["id"]: p["name"] for p in message["participants"]}
        for event in message.get("events", []):
            if event["type"] == "BulletFiredEvent":
                fired[names[event["bullet"]["ownerId"]]] += 1
    assert fired["Gunner"] > 0 and fired["Surfer"] > 0

    result = _run("scripts/duel_stats.py", str(path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for name in ("Gunner", "Surfer"):
        (total,) = re.findall(rf"{name}'s shots by distance.*?\n(?:.*\n)*?\s+all:\s+(\d+)", out)
        assert int(total) == fired[name]
        (aim,) = re.findall(rf"{name}'s aim \((\d+) shots\): ([\d. ]+)", out)
        assert int(aim[0]) == fired[name]
        (target,) = re.findall(rf"{name} as the target \((\d+) waves\): ([\d. ]+)", out)
        assert 0 < int(target[0]) <= fired["Surfer" if name == "Gunner" else "Gunner"]
        for shares in (aim[1], target[1]):
            values = [float(v) for v in shares.split()]
            assert len(values) == 9 and abs(sum(values) - 1.0) < 0.05


def test_duel_stats_says_in_one_line_what_is_not_a_recording(tmp_path: Path) -> None:
    bad = tmp_path / "bad.battle.gz"
    bad.write_text("not a recording\n")
    for path in (bad, tmp_path / "missing.battle.gz"):
        result = _run("scripts/duel_stats.py", str(path))
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr.startswith("duel_stats: ") and result.stderr.count("\n") == 1, result.stderr
