"""`sacbot checkpoint ...` through the real entry point (`python -m sacbot`), good input and bad."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sacbot.checkpoint import CheckpointMeta, best_path, load_checkpoint, read_meta, save_checkpoint


def sacbot(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sacbot", "checkpoint", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert result.returncode == code, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sacbot: error: "), result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_promote_is_gated_and_says_why(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
) -> None:
    weights = tmp_path / "weights"
    save_checkpoint(
        tmp_path / "good.zip", make_arrays(seed=1), make_meta(score=3.0, score_kind="eval_return")
    )
    save_checkpoint(tmp_path / "old.zip", make_arrays(seed=2), None)

    first = sacbot("promote", str(tmp_path / "good.zip"), "--weights-dir", str(weights))
    assert first.returncode == 0 and "promoted" in first.stdout and "no stored best" in first.stdout
    assert "stored new best: score 3 (eval_return)" in first.stderr

    worse = sacbot("promote", str(tmp_path / "old.zip"), "--weights-dir", str(weights), "--score", "2")
    assert worse.returncode == 0 and worse.stdout.startswith("not promoted: 2 < stored 3"), worse.stdout
    tie = sacbot("promote", str(tmp_path / "old.zip"), "--weights-dir", str(weights), "--score", "3")
    assert tie.returncode == 0 and "ties the stored 3" in tie.stdout
    assert read_meta(best_path(weights)).score == 3.0  # type: ignore[union-attr]

    forced = sacbot(
        "promote", str(tmp_path / "old.zip"), "--weights-dir", str(weights), "--score", "2", "--force"
    )
    assert (
        forced.returncode == 0 and "forced" in forced.stdout and "--force overrides the gate" in forced.stderr
    )
    stored = read_meta(best_path(weights))
    assert stored is not None and (stored.score, stored.score_kind) == (2.0, "eval_return")

    spin = sacbot("promote", str(tmp_path / "good.zip"), "--weights-dir", str(weights), "--slot", "SpinBot")
    assert spin.returncode == 0, spin.stderr
    arrays, meta = load_checkpoint(weights / "opponents" / "SpinBot.zip")
    assert meta is not None and meta.opponent == "SpinBot" and meta.score == 3.0

    shown = sacbot("show", str(weights), "--json")
    rows = json.loads(shown.stdout)
    assert [(r["slot"], r["score"], r["ok"]) for r in rows] == [
        ("best", 2.0, True),
        ("opponents/SpinBot", 3.0, True),
    ]
    table = sacbot("show", str(weights))
    assert table.returncode == 0 and "best" in table.stdout and "eval_r" in table.stdout


def test_verify_export_and_bad_input(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
) -> None:
    # Stand-in arrays name no real network sizes, so verify checks their structure only.
    good = make_meta(network_sizes={}, score=1.0, score_kind="k")
    save_checkpoint(tmp_path / "good.zip", make_arrays(), good)
    ok = sacbot("verify", str(tmp_path / "good.zip"))
    assert ok.returncode == 0 and ok.stdout.startswith("ok: ") and "structure only" in ok.stdout
    save_checkpoint(tmp_path / "sizes.zip", make_arrays(), make_meta(network_sizes={"obs": 5}))
    assert_one_line_error(sacbot("verify", str(tmp_path / "sizes.zip")), 1, "cannot build networks", "'obs'")

    data = (tmp_path / "good.zip").read_bytes()
    (tmp_path / "cut.zip").write_bytes(data[: len(data) // 2])
    assert_one_line_error(sacbot("verify", str(tmp_path / "cut.zip")), 1, "cut.zip", "truncated")
    assert_one_line_error(sacbot("verify", str(tmp_path / "none.zip")), 1, "no such file")
    assert_one_line_error(sacbot("show", str(tmp_path / "cut.zip")), 1, "truncated")

    exported = sacbot("export", str(tmp_path / "good.zip"), str(tmp_path / "actor.zip"), "--actor-only")
    assert exported.returncode == 0, exported.stderr
    arrays, meta = load_checkpoint(tmp_path / "actor.zip")
    assert (
        sorted(arrays) == ["actor.fc.bias", "actor.fc.weight", "log_alpha"]  # the actor and its temperature
        and meta is not None
        and meta.contents == "actor"
    )
    actor_promote = sacbot("promote", str(tmp_path / "actor.zip"), "--weights-dir", str(tmp_path / "w"))
    assert_one_line_error(actor_promote, 2, "actor-only export")
    # An existing OUT is never overwritten without --force.
    before = (tmp_path / "actor.zip").read_bytes()
    again = sacbot("export", str(tmp_path / "good.zip"), str(tmp_path / "actor.zip"))
    assert_one_line_error(again, 1, "already exists", "--force")
    assert (tmp_path / "actor.zip").read_bytes() == before

    bad_slot = sacbot(
        "promote", str(tmp_path / "good.zip"), "--weights-dir", str(tmp_path), "--slot", "../evil"
    )
    assert_one_line_error(bad_slot, 2, "invalid opponent name")
    latest = sacbot("promote", str(tmp_path / "good.zip"), "--weights-dir", str(tmp_path), "--slot", "latest")
    assert_one_line_error(latest, 2, "resume slot")
    save_checkpoint(tmp_path / "unscored.zip", make_arrays(), make_meta())
    unscored = sacbot("promote", str(tmp_path / "unscored.zip"), "--weights-dir", str(tmp_path / "w"))
    assert_one_line_error(unscored, 2, "no score", "--score")
    assert not (tmp_path / "w").exists()


def test_new_writes_a_seeded_fresh_trainer_that_verify_checks_against_the_networks(tmp_path: Path) -> None:
    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig

    out = tmp_path / "fresh.zip"
    made = sacbot("new", str(out), "--seed", "3")
    assert made.returncode == 0, made.stderr
    arrays, meta = load_checkpoint(out)
    assert meta is not None and meta.score is None and meta.env_steps == 0 and meta.extra["seed"] == 3
    expected = SacTrainer(TrainerConfig(seed=3, device="cpu", replay_capacity=64)).state_arrays()
    assert sorted(arrays) == sorted(expected)
    assert all(arrays[name].tobytes() == expected[name].tobytes() for name in expected)
    assert_one_line_error(sacbot("new", str(out)), 1, "already exists")

    name = "critic2.gru.weight_hh_l0"
    arrays[name] = np.zeros((3, 3), arrays[name].dtype)
    save_checkpoint(tmp_path / "reshaped.zip", arrays, meta)
    assert_one_line_error(
        sacbot("verify", str(tmp_path / "reshaped.zip")), 1, f"{name} has shape (3, 3), expected (384, 128)"
    )


def test_verify_and_show_know_the_angle_inputs(tmp_path: Path) -> None:
    from sacbot.agent.sizes import NetworkSizes
    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig

    sac = SacTrainer(TrainerConfig(sizes=NetworkSizes(angle_inputs=True), device="cpu", replay_capacity=64))
    path = tmp_path / "angles.zip"
    save_checkpoint(path, sac.state_arrays(), CheckpointMeta(network_sizes=sac.network_sizes()))
    verified = sacbot("verify", str(path))
    assert verified.returncode == 0, verified.stderr
    shown = sacbot("show", str(path))
    assert shown.returncode == 0 and "angle_inputs" in shown.stdout.replace("\n", ""), shown.stdout
    # the same arrays under a meta that says the plain 17 inputs: the first layers' width does not match
    save_checkpoint(
        tmp_path / "plain.zip", sac.state_arrays(), CheckpointMeta(network_sizes=NetworkSizes().as_dict())
    )
    assert_one_line_error(sacbot("verify", str(tmp_path / "plain.zip")), 1, "fc_in")
