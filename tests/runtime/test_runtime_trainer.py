"""The trainer thread as a unit: warm-up in rounds, update-to-data ratio, publishing, saves, crashes."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sacbot.checkpoint import load_checkpoint
from sacbot.runtime.channel import DropOldestChannel
from sacbot.runtime.learner import AgentLearner
from sacbot.runtime.records import ChannelItem, RoundReport, Transition
from sacbot.runtime.saver import RoundEndSaver
from sacbot.runtime.trainer import ThreadConfig, TrainerThread


def wait_for(condition: Callable[[], bool], what: str, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def make(
    tmp_path: Path, config: ThreadConfig, learner: AgentLearner, capacity: int = 4096
) -> tuple[TrainerThread, list[str]]:
    channel: DropOldestChannel[ChannelItem] = DropOldestChannel(capacity)
    saver = RoundEndSaver(tmp_path, "Target", best_window=2, log=io.StringIO())
    crashes: list[str] = []
    trainer = TrainerThread(learner, channel, saver, config, on_crash=lambda exc, text: crashes.append(text))
    return trainer, crashes


def feed(trainer: TrainerThread, transitions: list[Transition]) -> None:
    for transition in transitions:
        trainer.channel.put(transition)


def test_warmup_ratio_publish_and_round_end_saves(
    tmp_path: Path,
    small_learner: Callable[..., AgentLearner],
    synthetic_round: Callable[..., list[Transition]],
    report: Callable[..., RoundReport],
) -> None:
    rng = np.random.default_rng(0)
    trainer, crashes = make(
        tmp_path, ThreadConfig(warmup_rounds=1, utd_ratio=0.25, publish_every=2), small_learner()
    )
    first_actor = trainer.published
    trainer.start()
    try:
        feed(trainer, synthetic_round(30, rng)[:-1])  # the round is still open: no update during warm-up
        wait_for(lambda: trainer.added == 29, "the drain")
        time.sleep(0.1)
        assert trainer.updates_here == 0
        feed(trainer, synthetic_round(30, rng)[-1:])  # closes round 1 (any done transition does)
        trainer.round_ended(report(1))
        wait_for(lambda: trainer.rounds_saved == 1, "round 1 saved")
        wait_for(lambda: trainer.updates_here >= 4, "updates after the warm-up")
        time.sleep(0.2)
        # The update-to-data ratio caps the updates at 0.25 per stored transition.
        assert trainer.updates_here <= 0.25 * trainer.added
        assert trainer.published is not first_actor and trainer.published_version >= 2
        feed(trainer, synthetic_round(40, rng))
        trainer.round_ended(report(2))
        wait_for(lambda: trainer.rounds_saved == 2, "round 2 saved")
    finally:
        trainer.stop()
    assert not trainer.is_alive() and not crashes
    learner = trainer.learner
    assert isinstance(learner, AgentLearner)  # `make` builds one; reach into its SacTrainer
    arrays, meta = load_checkpoint(tmp_path / "latest.zip", learner.trainer.array_specs())
    assert meta is not None and 0 < meta.updates == int(arrays["counters.updates"]) <= trainer.learner.updates
    assert int(arrays["counters.env_steps"]) == 70
    lines = [json.loads(line) for line in (tmp_path / "training_metrics.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["updates_in_pass"] == 0 and lines[0]["critic_loss"] is None
    assert lines[1]["updates_in_pass"] > 0 and lines[1]["transitions_drained"] == 40
    assert np.isfinite(lines[1]["critic_loss"]) and lines[1]["env_steps"] == 70
    assert (tmp_path / "opponents" / "Target.zip").is_file()
    assert json.loads((tmp_path / "round_counter.json").read_text())["rounds"] == 2


def test_stop_still_saves_the_last_posted_round(
    tmp_path: Path,
    small_learner: Callable[..., AgentLearner],
    synthetic_round: Callable[..., list[Transition]],
    report: Callable[..., RoundReport],
) -> None:
    rng = np.random.default_rng(1)
    trainer, crashes = make(tmp_path, ThreadConfig(warmup_rounds=5), small_learner())
    trainer.start()
    feed(trainer, synthetic_round(10, rng))
    trainer.round_ended(report(1))
    trainer.stop()  # at once: the posted round must still reach the disk
    assert not trainer.is_alive() and not crashes
    assert json.loads((tmp_path / "round_counter.json").read_text())["rounds"] == 1
    assert (tmp_path / "latest.zip").is_file()


def test_a_crash_is_reported_never_silent(tmp_path: Path, small_learner: Callable[..., AgentLearner]) -> None:
    trainer, crashes = make(tmp_path, ThreadConfig(), small_learner())
    done = threading.Event()
    original = trainer.on_crash
    assert original is not None

    def on_crash(exc: BaseException, text: str) -> None:
        original(exc, text)
        done.set()

    trainer.on_crash = on_crash
    trainer.start()
    bad = np.zeros(5, np.float32)  # a wrong-shaped state: the replay refuses it
    trainer.channel.put(Transition(bad, bad, 0.0, bad, False, bad))
    assert done.wait(30), "the crash was not reported"
    trainer.join(10)
    assert not trainer.is_alive()
    assert trainer.error is not None and "Traceback" in crashes[0]
