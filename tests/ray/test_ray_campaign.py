"""A campaign's `[ray]` table: its pretraining runs `train-fast --ray` (env runners on a local Ray instance)
and every eval's games run at once as Ray tasks; the run folder, log and best-gating are the local run's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BOTS = Path(__file__).resolve().parents[2] / "bots"

CAMPAIGN = f"""
name = "raytest"
seed = 5
bots_dirs = ["{BOTS}"]

[chunks]
rounds = 1
budget = 1

[opponents]
Target = 1

[eval]
every = 1
rounds = 1
opponents = ["Target", "{BOTS / "SpinBot"}"]
metric = "score_share"
window = 1

[pretrain]
steps = 2000
envs = 2
opponents = ["Target", "SpinBot"]
rounds_per_game = 2

[ray]
runners = 2
"""


def _sacbot(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sacbot", *args],
        capture_output=True,
        text=True,
        timeout=400,
        env={**os.environ, **(env or {})},
    )


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_campaign_pretrains_and_evaluates_on_ray(tmp_path: Path) -> None:
    file = tmp_path / "ray.toml"
    file.write_text(CAMPAIGN)
    out = tmp_path / "run"
    result = _sacbot(["train-campaign", str(file), "--out", str(out), "--json"])
    assert result.returncode == 0, result.stderr[-3000:]
    events = _lines(out / "campaign_log.jsonl")
    start = next(e for e in events if e["event"] == "pretrain_start")
    assert "--ray --runners 2" in start["command"]
    metrics = _lines(out / "pretrain" / "training_metrics.jsonl")
    assert metrics[-1]["runners"] == 2 and metrics[-1]["env_steps"] >= 2000  # the Ray learner's lines
    # Two evals (the pretrained weights, then after chunk 1), each against both opponents, in order.
    evals = _lines(out / "eval_log.jsonl")
    assert [(e["chunk"], e["opponent"]) for e in evals] == [
        (0, "Target"), (0, "SpinBot"), (1, "Target"), (1, "SpinBot"),
    ]  # fmt: skip
    assert all(e["rounds"] == 1 for e in evals)
    done = [e for e in events if e["event"] == "eval_done"]
    assert len(done) == 2 and done[0]["composite"] is not None
    assert (out / "weights" / "best.zip").is_file()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "rounds_per_game = 2",
            "rounds_per_game = 2\nteacher_lead = 100",
            "ray.pretrain: teacher-led steps run on this machine; set teacher_lead = 0",
        ),
        (
            "[chunks]",
            '[server]\nurl = "ws://127.0.0.1:7654"\n\n[chunks]',
            "ray.evals: each eval game on Ray runs an embedded arena; remove server.url",
        ),
    ],
)
def test_ray_table_refuses_what_ray_cannot_do(tmp_path: Path, old: str, new: str, message: str) -> None:
    file = tmp_path / "bad.toml"
    file.write_text(CAMPAIGN.replace(old, new))
    out = tmp_path / "run"
    result = _sacbot(["train-campaign", str(file), "--out", str(out)])
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"sacbot: error: {file}: {message}"]
    assert not out.exists()


def test_ray_table_without_ray_is_one_error_line(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    file = tmp_path / "ray.toml"
    file.write_text(CAMPAIGN)
    out = tmp_path / "run"
    path = os.pathsep.join([str(shadow.parent), os.environ.get("PYTHONPATH", "")])
    result = _sacbot(["train-campaign", str(file), "--out", str(out)], {"PYTHONPATH": path})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"sacbot: error: {file}: [ray] needs Ray, which is not installed: pip install 'sacbot[ray]'"
    ]
    assert not out.exists()
