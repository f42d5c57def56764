"""`sacbot make-twin` and the one-line errors of the campaign commands (real CLI processes, real files)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from sacbot.campaign.twin import make_twin
from sacbot.checkpoint import CheckpointMeta, load_checkpoint, save_checkpoint


def sacbot(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sacbot", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=os.environ,
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_make_twin_writes_a_frozen_bot_and_resets(tmp_path: Path) -> None:
    source = tmp_path / "best.zip"
    save_checkpoint(source, {"w": np.arange(4, dtype=np.float32)}, CheckpointMeta(env_steps=7))
    bots = tmp_path / "bots"
    result = sacbot("make-twin", "--from", str(source), "--bots-dir", str(bots))
    assert result.returncode == 0, result.stderr
    twin = bots / "SacTwin"
    identity = json.loads((twin / "SacTwin.json").read_text())
    assert identity["name"] == "SacTwin" and identity["version"] and identity["authors"]
    script = (twin / "SacTwin.sh").read_text()
    assert os.access(twin / "SacTwin.sh", os.X_OK)
    assert (
        "SACBOT_EVAL_MODE=1" in script
        and "frozen.zip" in script
        and 'SACBOT_WEIGHTS_DIR="$HERE/weights"' in script
    )
    assert (twin / "SacTwin.cmd").read_bytes().count(b"\r\n") > 3
    arrays, meta = load_checkpoint(twin / "weights" / "latest.zip")
    assert np.array_equal(arrays["w"], np.arange(4)) and meta is not None and meta.env_steps == 7
    assert digest(twin / "frozen.zip") == digest(source)
    assert json.loads((twin / "weights" / "round_counter.json").read_text())["rounds"] == 0

    # The twin trains (or just runs) and its folder changes; re-running resets it to the frozen baseline.
    save_checkpoint(twin / "weights" / "latest.zip", {"w": np.zeros(4, np.float32)}, CheckpointMeta())
    (twin / "weights" / "rounds.jsonl").write_text('{"round": 1}\n')
    again = make_twin(source, "SacTwin", bots, learning=True)
    assert again.reset and again.learning
    assert digest(twin / "weights" / "latest.zip") == digest(source)
    assert not (twin / "weights" / "rounds.jsonl").exists()
    learning_script = (twin / "SacTwin.sh").read_text()
    assert "SACBOT_EVAL_MODE=0" in learning_script and "weights/latest.zip" in learning_script
    assert digest(source) == digest(twin / "frozen.zip")  # the source was only read


def test_make_twin_refuses_foreign_folders_and_bad_sources(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    (bots / "Walls").mkdir(parents=True)
    (bots / "Walls" / "Walls.json").write_text("{}")
    source = tmp_path / "best.zip"
    save_checkpoint(source, {"w": np.zeros(2, np.float32)}, CheckpointMeta())
    foreign = sacbot("make-twin", "--from", str(source), "--bots-dir", str(bots), "--name", "Walls")
    assert foreign.returncode != 0 and "not a twin" in foreign.stderr and "Traceback" not in foreign.stderr
    assert (bots / "Walls" / "Walls.json").read_text() == "{}"
    missing = sacbot("make-twin", "--bots-dir", str(bots))
    assert (
        missing.returncode == 2
        and "--from" in missing.stderr
        and len(missing.stderr.strip().splitlines()) == 1
    )
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(b"PK\x03\x04 not really")
    bad = sacbot("make-twin", "--from", str(corrupt), "--bots-dir", str(bots))
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert not (bots / "SacTwin").exists()
    same = sacbot("make-twin", "--from", str(source), "--bots-dir", str(bots), "--name", "SacBot")
    assert same.returncode == 2 and "Traceback" not in same.stderr


def test_make_twin_takes_the_training_bots_identity_through_the_one_reader(tmp_path: Path) -> None:
    source = tmp_path / "best.zip"
    save_checkpoint(source, {"w": np.zeros(2, np.float32)}, CheckpointMeta())
    bots = tmp_path / "bots"
    (bots / "SacBot").mkdir(parents=True)
    sacbot_json = bots / "SacBot" / "SacBot.json"
    sacbot_json.write_text(
        json.dumps({"name": "SacBot", "version": "0.3", "authors": "Ann, Bob", "base": "run", "extra": 1})
    )
    make_twin(source, "Twin", bots, learning=False)
    identity = json.loads((bots / "Twin" / "Twin.json").read_text())
    assert (identity["name"], identity["version"], identity["authors"]) == ("Twin", "0.3", ["Ann", "Bob"])
    assert identity["gameTypes"] and identity["platform"] == "Python"  # make-twin's defaults fill the gaps
    assert "base" not in identity and "extra" not in identity
    sacbot_json.write_text(json.dumps({"name": "SacBot", "authors": ["Ann"]}))
    broken = sacbot("make-twin", "--from", str(source), "--bots-dir", str(bots), "--name", "Other")
    lines = broken.stderr.strip().splitlines()
    assert broken.returncode == 2 and len(lines) == 1 and "SacBot.json" in lines[0] and "version" in lines[0]
    assert not (bots / "Other").exists()  # refused before anything was written


def test_bad_campaign_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[chunks]\nrounds = 3\nbudget = "lots"\n[opponents]\nWalls = 1\n')
    result = sacbot("train-campaign", str(bad), "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "chunks.budget" in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()
    setup = tmp_path / "setup.toml"
    setup.write_text(
        'name = "x"\n[game]\nsetup = { arena_size = 3 }\n'
        "[chunks]\nrounds = 3\nbudget = 1\n[opponents]\nWalls = 1\n"
    )
    result = sacbot("train-campaign", str(setup))
    assert result.returncode == 2 and "game" in result.stderr and "arena_size" in result.stderr


def test_eval_refuses_a_missing_checkpoint(tmp_path: Path) -> None:
    result = sacbot(
        "eval", "--checkpoint", str(tmp_path / "none.zip"), "--opponents", "Walls", "--rounds", "1"
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_unknown_opponent_is_refused_before_any_game(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('name = "x"\n[chunks]\nrounds = 1\nbudget = 1\n[opponents]\nWalls = 1\nNoSuchBot = 0.5\n')
    result = sacbot("train-campaign", str(cfg), "--out", str(tmp_path / "run"))
    assert result.returncode == 2 and "NoSuchBot" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "run" / "campaign_log.jsonl").exists()


def test_seed_option_overrides_the_files_and_a_run_resumes_only_with_its_own(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('name = "x"\nseed = 3\n[chunks]\nrounds = 1\nbudget = 1\n[opponents]\nWalls = 1\n')
    run = tmp_path / "run"
    run.mkdir()
    log = run / "campaign_log.jsonl"
    log.write_text('{"event":"start","time":1.0,"campaign":"x","seed":7,"budget":1,"completed":0}\n')
    for args, said in (([], "seed 7, not 3"), (["--seed", "5"], "seed 7, not 5")):
        result = sacbot("train-campaign", str(cfg), "--out", str(run), *args)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and said in lines[0] and "--seed 7" in lines[0]
    assert log.read_text().count("\n") == 1  # nothing was added to the run's log
    negative = sacbot("train-campaign", str(cfg), "--out", str(run), "--seed", "-1")
    assert negative.returncode == 2 and "--seed" in negative.stderr and "Traceback" not in negative.stderr
