"""`sacbot train-fast`: trains with the learner's trainer; writes checkpoints that play's loader accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sacbot.agent.trainer import SacTrainer, TrainerConfig
from sacbot.checkpoint import latest_path, load_for_game, opponent_best_path, restore_trainer
from sacbot.env.train import train_fast


def test_train_fast_writes_resumable_checkpoints_and_best_slots(tmp_path: Path) -> None:
    out = tmp_path / "weights"
    summary = train_fast(
        "SpinBot,Target", out, steps=1200, envs=4, seed=1, updates_per_step=0.1, warmup_steps=400,
        save_every=600, best_window=1, max_turns=150,
    )  # fmt: skip
    assert summary.env_steps >= 1200 and summary.updates > 0 and summary.rounds >= 8
    fresh = SacTrainer(TrainerConfig(device="cpu"))
    meta = restore_trainer(latest_path(out), fresh)
    assert meta is not None and meta.env_steps == summary.env_steps and fresh.updates == summary.updates
    rounds = [json.loads(line) for line in (out / "rounds.jsonl").read_text().splitlines()]
    assert len(rounds) == summary.rounds
    assert {r["opponent"] for r in rounds} == {"SpinBot", "Target"}
    assert all(r["written_by"] == "sacbot train-fast" for r in rounds)
    assert json.loads((out / "round_counter.json").read_text())["rounds"] == summary.rounds
    # With max_turns=150 most rounds are truncated (no score); a finished one fills its one-round window.
    finished = {r["opponent"] for r in rounds if r["outcome"] != "truncated"}
    for name in finished:
        assert opponent_best_path(out, name).is_file()
        loaded = load_for_game(out, name, fresh.array_specs())  # the slot order `sacbot play` loads
        assert loaded is not None and loaded.slot == f"opponents/{name}"
    # A second run with the same --out resumes: counters go on from the first run.
    again = train_fast("Target", out, steps=200, envs=2, seed=1, updates_per_step=0.0, max_turns=150)
    assert again.env_steps == summary.env_steps + 200
    assert again.rounds >= summary.rounds


def test_cli_rejects_an_unknown_opponent_with_one_line(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "sacbot", "train-fast", "--opponents", "SpinBot,Nobody"]
    command += ["--out", str(tmp_path)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ})
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Nobody" in result.stderr
    assert not any(tmp_path.iterdir())
