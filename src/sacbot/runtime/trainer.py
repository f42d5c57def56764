"""The trainer thread: drains the channel into the replay, updates, publishes the actor, saves at round end.

It never blocks the realtime thread: the realtime thread only puts into the drop-oldest channel, posts round
reports onto a queue and reads `published` (one reference read). Everything that touches torch or the disk
happens here, between two updates, so every snapshot it saves is consistent.

A crash here is never silent: the exception is kept in `error` and `on_crash` is called (the app ends the
process with a clear message).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sacbot.runtime.channel import DropOldestChannel
from sacbot.runtime.ports import Learner, TickActor
from sacbot.runtime.records import ChannelItem, EpisodeCut, RoundReport

_LOSS_KEYS = (
    "critic_loss", "qf1_loss", "qf2_loss", "actor_loss", "alpha_loss", "alpha", "kickstart_loss",
    "self_imitation_loss", "hindsight_aim_loss", "anchor_loss",
)  # fmt: skip
_IDLE_WAIT_S = 0.005  # how long an idle trainer sleeps before looking at the channel again
_MAX_DRAIN = 4096  # transitions per drain, so a round-end request is never starved


@dataclass(frozen=True)
class ThreadConfig:
    warmup_rounds: int = 2  # rounds stored before the first update
    utd_ratio: float = 0.5  # updates per stored transition; <= 0: flat out
    publish_every: int = 10  # publish the actor every N updates
    torch_threads: int = 1
    duty: float = 1.0  # share of the wall time the trainer may spend updating (the rest it sleeps)
    nice: int = 0  # added to this thread's OS niceness (Linux: per thread): the realtime thread wins the CPU


class RoundSink(Protocol):
    """Where round ends go (the saver): called on the trainer thread with a consistent snapshot."""

    def save_round(self, learner: Learner, report: RoundReport, train_pass: dict[str, Any]) -> None: ...

    def save_game_end(self, learner: Learner) -> None:
        """Once, when the thread stops, after the last round's save (the replay kept for the next process)."""


@dataclass
class _PassTotals:
    """Sums over one train pass (the work between two round ends)."""

    updates: int = 0
    drained: int = 0
    sums: dict[str, float] = field(default_factory=lambda: dict.fromkeys(_LOSS_KEYS, 0.0))

    def add(self, metrics: dict[str, float]) -> None:
        self.updates += 1
        for key in _LOSS_KEYS:
            self.sums[key] += float(metrics.get(key, 0.0))

    def averages(self) -> dict[str, float | None]:
        if self.updates == 0:
            return dict.fromkeys(_LOSS_KEYS)
        return {key: self.sums[key] / self.updates for key in _LOSS_KEYS}


def _lower_priority(nice: int) -> None:
    """Raise this thread's niceness by `nice` (Linux gives each thread its own; elsewhere nothing happens)."""
    if nice <= 0 or not hasattr(os, "setpriority") or not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError:
        pass  # a policy that forbids it only costs some latency


class TrainerThread(threading.Thread):
    """Thread 2 of `sacbot play`. Start it, post round ends with `round_ended`, end it with `stop`."""

    def __init__(
        self,
        learner: Learner,
        channel: DropOldestChannel[ChannelItem],
        sink: RoundSink,
        config: ThreadConfig,
        on_crash: Callable[[BaseException, str], None] | None = None,
    ) -> None:
        super().__init__(name="sacbot-trainer", daemon=True)
        self.learner = learner
        self.channel = channel
        self.sink = sink
        self.config = config
        self.on_crash = on_crash
        # Read by the realtime thread with one reference read; replaced (never mutated) here.
        self.published: TickActor = learner.fast_actor()
        self.published_version = 0
        self.error: BaseException | None = None
        self.error_text = ""
        self.added = 0  # transitions stored by this process
        self.updates_here = 0  # updates done by this process
        self.rounds_saved = 0
        self.started_at = time.perf_counter()
        self._requests: queue.SimpleQueue[RoundReport] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._stopping = False
        self._pass = _PassTotals()

    # --- called from other threads -------------------------------------------------------------------------
    def round_ended(self, report: RoundReport) -> None:
        """Post a round end (never blocks); the trainer saves it between two updates."""
        self._requests.put(report)
        self._wake.set()

    def stop(self, timeout: float | None = 60.0) -> None:
        """Finish pending round saves, then end the thread (waits up to `timeout` seconds)."""
        self._stopping = True
        self._wake.set()
        if self.is_alive():
            self.join(timeout)

    def updates_per_s(self) -> float:
        elapsed = time.perf_counter() - self.started_at
        return self.updates_here / elapsed if elapsed > 0 else 0.0

    # --- the thread ---------------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            import torch

            torch.set_num_threads(self.config.torch_threads)
            _lower_priority(self.config.nice)
            self.started_at = time.perf_counter()
            while not self._stopping:
                self._drain()
                self._handle_round_ends()
                if self._may_update():
                    began = time.perf_counter()
                    self._update_once()
                    # Yield the GIL (and, below duty 1, a CPU) to the realtime thread between updates.
                    time.sleep((time.perf_counter() - began) * (1.0 - self.config.duty) / self.config.duty)
                else:
                    self._wake.wait(_IDLE_WAIT_S)
                    self._wake.clear()
            # Shutdown: whatever the realtime thread posted last is still saved, then the replay.
            self._drain()
            self._handle_round_ends()
            self.sink.save_game_end(self.learner)
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the main thread
            self.error = exc
            self.error_text = traceback.format_exc()
            if self.on_crash is not None:
                self.on_crash(exc, self.error_text)

    def _drain(self) -> None:
        while True:
            batch = self.channel.drain(_MAX_DRAIN)
            for item in batch:
                if isinstance(item, EpisodeCut):
                    self.learner.cut_episode()
                    continue
                self.learner.add(item)
                self.added += 1
                self._pass.drained += 1
            if len(batch) < _MAX_DRAIN:
                return

    def _handle_round_ends(self) -> None:
        while True:
            try:
                report = self._requests.get_nowait()
            except queue.Empty:
                return
            # Transitions of that round were put before the report: drain them into the replay first.
            self._drain()
            train_pass = {
                **self._pass.averages(),
                "updates_in_pass": self._pass.updates,
                "transitions_drained": self._pass.drained,
                "replay_size": self.learner.replay_size(),
                "env_steps": self.learner.env_steps,
                "updates": self.learner.updates,
            }
            self.sink.save_round(self.learner, report, train_pass)
            self.rounds_saved += 1
            self._pass = _PassTotals()

    def _may_update(self) -> bool:
        if self.learner.rounds_stored() < self.config.warmup_rounds:
            return False
        if self.config.utd_ratio > 0 and self.updates_here + 1 > self.config.utd_ratio * self.added:
            return False
        return True

    def _update_once(self) -> None:
        metrics = self.learner.update()
        if not metrics:  # the replay cannot sample a window yet
            self._wake.wait(_IDLE_WAIT_S)
            self._wake.clear()
            return
        self.updates_here += 1
        self._pass.add(metrics)
        if self.updates_here % self.config.publish_every == 0:
            self.published = self.learner.fast_actor()
            self.published_version += 1
