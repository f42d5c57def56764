"""`scripts/actor_start.py` and `scripts/inprocess_duel.py`: a fine-tune start from the shipped actor that
`train-fast` resumes from, and the in-process duel that compares checkpoints (docs/learning.md, "Surf
shaping")."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import CheckpointMeta, latest_path, load_checkpoint, read_meta, save_checkpoint
from sacbot.env.train import train_fast
from sacbot.export.policy import sizes_from_dict
from sacbot.runtime.startup import SHIPPED_ACTOR

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=REPO)


def test_actor_start_writes_the_shipped_actor_over_fresh_critics_for_train_fast_to_resume(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    done = _run("scripts/actor_start.py", str(run), "--seed", "1")
    assert done.returncode == 0, done.stderr
    shipped, shipped_meta = load_checkpoint(SHIPPED_ACTOR)
    start, meta = load_checkpoint(latest_path(run))
    assert shipped_meta is not None and meta is not None and meta.contents == "full" and meta.score is None
    assert meta.updates == shipped_meta.updates and meta.network_sizes == shipped_meta.network_sizes
    assert all(np.array_equal(start[k], v) for k, v in shipped.items())  # the actor and its temperature
    assert int(start["counters.updates"]) == shipped_meta.updates and "critic1.fc_in.weight" in start
    again = _run("scripts/actor_start.py", str(run))  # never over an existing run
    assert again.returncode != 0 and again.stderr.strip().startswith("actor_start:")
    assert "Traceback" not in again.stderr and len(again.stderr.strip().splitlines()) == 1
    said: list[str] = []
    summary = train_fast("Walls", run, steps=200, envs=2, seed=3, updates_per_step=0.0, max_turns=100,
                         log=said.append)  # fmt: skip
    counters = f"(env steps {shipped_meta.env_steps}, updates {meta.updates})"
    assert f"resumed from {latest_path(run)} {counters}" in said
    assert summary.updates == meta.updates  # no update asked for: the counters went on from the actor's
    resumed = read_meta(latest_path(run))
    assert resumed is not None  # the same networks (a meta from before `wave_decay` reads the default)
    assert sizes_from_dict(resumed.network_sizes) == sizes_from_dict(meta.network_sizes)


def test_inprocess_duel_prints_rounds_won_and_hit_shares_per_seed() -> None:
    done = _run("scripts/inprocess_duel.py", str(SHIPPED_ACTOR), "Target,SpinBot", "--rounds", "2",
                "--seeds", "1,2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 4
    pattern = (
        r".* vs (Target|SpinBot), seed (1|2): won (\d) of 2; our hits ([\d.]+) of (\d+) \(power ([\d.]+)\);"
    )
    for line in lines:
        m = re.match(pattern, line)
        assert m is not None, line
        assert int(m.group(5)) > 0 and 0.0 < float(m.group(4)) <= 1.0 and 0.1 <= float(m.group(6)) <= 3.0
        moved = re.search(r"distance (\d+), speed ([\d.]+), reversals ([\d.]+) a round", line)
        assert moved is not None, line
        assert 36 <= int(moved.group(1)) <= 1000 and 0.0 < float(moved.group(2)) <= 8.0  # 1v1: 800 x 600
    assert [re.match(pattern, line).group(1, 2) for line in lines] == [  # type: ignore[union-attr]
        ("Target", "1"), ("Target", "2"), ("SpinBot", "1"), ("SpinBot", "2"),
    ]  # fmt: skip
    bad = _run("scripts/inprocess_duel.py", str(SHIPPED_ACTOR), "Target", "--power", "4")
    assert bad.returncode != 0
    assert bad.stderr.strip() == "inprocess_duel: --power must lie in [0.1, 3], not 4.0"


def test_inprocess_duel_plays_the_actors_gun_with_the_surfing_teachers_movement() -> None:
    """`--movement surf`: the shipped actor's gun, the surfing teacher's turn and speed; the line is the
    same, the movement not the actor's (its reversals against Surfer differ from its own play's)."""
    runs = {}
    for movement in ((), ("--movement", "surf")):
        done = _run("scripts/inprocess_duel.py", str(SHIPPED_ACTOR), "Surfer", "--rounds", "2", *movement)
        assert done.returncode == 0, done.stderr
        moved = re.search(r"won (\d) of 2; .* reversals ([\d.]+) a round", done.stdout)
        assert moved is not None, done.stdout
        runs[movement] = float(moved.group(2))
    assert runs[()] != runs[("--movement", "surf")]


def test_inprocess_duel_says_how_far_the_speed_follows_the_surfing_teacher(tmp_path: Path) -> None:
    """`--agreement`: where the surfing label differs from the orbiting teacher's, how often the actor's own
    speed entry falls in the label's class (back, stop, go)."""
    share = r"([\d.]+)"
    pattern = (
        rf"surfing decides {share} of steps, the actor follows it on {share} "
        rf"\(back/stop/go: label {share}/{share}/{share}, actor {share}/{share}/{share}\)$"
    )
    done = _run("scripts/inprocess_duel.py", str(SHIPPED_ACTOR), "Surfer", "--rounds", "2", "--agreement")
    assert done.returncode == 0, done.stderr
    m = re.search(pattern, done.stdout.strip())
    assert m is not None, done.stdout
    decides, follows, *classes = (float(v) for v in m.groups())
    assert 0.0 < decides < 1.0 and 0.0 <= follows <= 1.0
    assert abs(sum(classes[:3]) - 1.0) < 0.02 and abs(sum(classes[3:]) - 1.0) < 0.02
    plain = tmp_path / "plain.zip"  # networks without the threat inputs: no surfing label to follow
    sac = SacTrainer(TrainerConfig(device="cpu", replay_capacity=64))
    save_checkpoint(plain, sac.state_arrays(), CheckpointMeta(network_sizes=sac.network_sizes()))
    bad = _run("scripts/inprocess_duel.py", str(plain), "Surfer", "--agreement")
    assert bad.returncode != 0
    said = f"inprocess_duel: {plain}: --agreement reads the threat inputs, which it has not"
    assert bad.stderr.strip() == said


def test_train_fast_start_actor_takes_a_checkpoints_actor_over_fresh_critics(tmp_path: Path) -> None:
    """`--start-actor`: a full checkpoint's actor and temperature, its counters, fresh critics; a folder that
    holds a run already resumes it instead."""
    first = tmp_path / "first"
    train_fast("Walls", first, steps=400, envs=2, seed=1, updates_per_step=0.5, warmup_steps=100,
               max_turns=100)  # fmt: skip
    held, held_meta = load_checkpoint(latest_path(first))
    assert held_meta is not None and held_meta.updates > 0
    run, said = tmp_path / "run", list[str]()
    train_fast("Walls", run, steps=100, envs=2, seed=2, updates_per_step=0.0, max_turns=100,
               start_actor=latest_path(first), log=said.append)  # fmt: skip
    assert any(line.startswith("start: ") and "over fresh critics" in line for line in said), said
    start, meta = load_checkpoint(latest_path(run))
    assert meta is not None and meta.updates == held_meta.updates and meta.contents == "full"
    actor = [k for k in held if k.startswith("actor.")] + ["log_alpha"]
    assert all(np.array_equal(start[k], held[k]) for k in actor)
    assert not np.array_equal(start["critic1.fc_in.weight"], held["critic1.fc_in.weight"])
    assert not np.array_equal(start["target2.q.weight"], held["target2.q.weight"])
    said.clear()
    train_fast("Walls", run, steps=100, envs=2, seed=2, updates_per_step=0.0, max_turns=100,
               start_actor=latest_path(first), log=said.append)  # fmt: skip
    assert not any(line.startswith("start: ") for line in said) and any("resumed from" in x for x in said)
    again, _ = load_checkpoint(latest_path(run))
    assert np.array_equal(again["critic1.fc_in.weight"], start["critic1.fc_in.weight"])  # no updates asked
    bad = subprocess.run(
        [sys.executable, "-m", "sacbot", "train-fast", "--out", str(tmp_path / "bad"), "--start-actor",
         str(tmp_path / "missing.zip"), "--steps", "10"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert bad.returncode != 0 and "missing.zip" in bad.stderr and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert not (tmp_path / "bad").exists()  # refused before anything was written


def test_inprocess_duel_plays_the_teachers_gun_with_the_actors_movement() -> None:
    """`--gun linear|wave`: the teacher's gun turn and fire over the actor's movement; against Surfer, which
    dodges where linear aims point, the linear gun hits less than the wave inputs' aim."""
    hits = {}
    for gun in ("linear", "wave"):
        done = _run("scripts/inprocess_duel.py", str(SHIPPED_ACTOR), "Surfer", "--rounds", "3", "--gun", gun)
        assert done.returncode == 0, done.stderr
        found = re.search(r"our hits ([\d.]+) of (\d+)", done.stdout)
        assert found is not None and int(found.group(2)) > 0, done.stdout
        hits[gun] = float(found.group(1))
    assert hits["linear"] < hits["wave"]
