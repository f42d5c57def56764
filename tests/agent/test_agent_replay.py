"""Sequence replay: windows never cross rounds, whole-round eviction, uniform coverage, thread safety."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from sacbot.agent.replay import SequenceReplay
from sacbot.checkpoint import CheckpointError
from sacbot.checkpoint.replay_file import load_replay, save_replay
from sacbot.rundir import REPLAY

S, A, HID, L = 3, 2, 4, 6


def round_arrays(round_id: int, length: int) -> tuple[np.ndarray, ...]:
    """obs[:, 0] = round id, obs[:, 1] = position, so every sampled entry tells where it came from."""
    obs = np.zeros((length + 1, S), np.float32)
    obs[:, 0] = round_id
    obs[:, 1] = np.arange(length + 1)
    act = np.stack([np.full(length, round_id), np.arange(length)], 1).astype(np.float32)
    rew = np.arange(length, dtype=np.float32)
    done = np.zeros(length, np.float32)
    done[-1] = 1.0
    hid = np.repeat(np.arange(length, dtype=np.float32)[:, None], HID, 1) + 1000 * round_id
    return obs, act, rew, done, hid


def check_windows(buf: SequenceReplay, batch_size: int = 256, seed: int = 0) -> None:
    b = buf.sample(batch_size, np.random.default_rng(seed))
    assert b.obs.shape == (batch_size, L + 1, S) and b.action.shape == (batch_size, L, A)
    # one round per window, consecutive positions, next state of the last step included
    assert np.all(b.obs[:, :, 0] == b.obs[:, :1, 0])
    assert np.all(np.diff(b.obs[:, :, 1], axis=1) == 1)
    assert np.all(b.action[:, :, 0] == b.obs[:, :1, 0])
    assert np.all(b.action[:, :, 1] == b.obs[:, :-1, 1])
    # done only ever on the last transition of a window
    assert np.all(b.done[:, :-1] == 0)
    # hidden state is the one stored before the window's first step
    assert np.all(b.hidden[:, 0] == b.obs[:, 0, 1] + 1000 * b.obs[:, 0, 0])


def test_windows_never_cross_rounds_add_round() -> None:
    buf = SequenceReplay(1000, S, A, HID, window=L)
    for r, length in enumerate([7, 3, 12, 6, 30]):  # a 3-step round holds no window
        buf.add_round(*round_arrays(r, length))
    check_windows(buf)
    assert buf.windows_available() == (7 - 5) + (12 - 5) + 1 + (30 - 5)


def test_windows_never_cross_rounds_step_by_step_with_wrap_and_eviction() -> None:
    buf = SequenceReplay(50, S, A, HID, window=L)
    rng = np.random.default_rng(0)
    for r in range(40):
        length = int(rng.integers(2, 20))
        obs, act, rew, done, hid = round_arrays(r, length)
        for t in range(length):
            buf.add(obs[t], act[t], float(rew[t]), obs[t + 1], bool(done[t]), hid[t])
        assert len(buf) <= 50
        if buf.windows_available():
            check_windows(buf, 64, seed=r)
        # rounds are evicted whole: every stored round is complete (positions 0..len-1), bar the open one
        stored = buf.round_of[buf.round_of >= 0]
        for rid in np.unique(stored):
            pos = np.sort(buf.pos[buf.round_of == rid])
            assert pos[0] == 0 and np.all(np.diff(pos) == 1)


def test_sampling_is_uniform_over_windows() -> None:
    buf = SequenceReplay(200, S, A, HID, window=L)
    buf.add_round(*round_arrays(0, 8))  # 3 windows
    buf.add_round(*round_arrays(1, 14))  # 9 windows
    b = buf.sample(12000, np.random.default_rng(1))
    starts = b.obs[:, 0, 0] * 100 + b.obs[:, 0, 1]
    _, counts = np.unique(starts, return_counts=True)
    assert len(counts) == 12
    assert counts.min() > 800 and counts.max() < 1200


def test_open_round_is_sampleable_and_empty_buffer_raises() -> None:
    buf = SequenceReplay(100, S, A, HID, window=L)
    with pytest.raises(ValueError):
        buf.sample(4, np.random.default_rng(0))
    obs, act, rew, done, hid = round_arrays(0, 20)
    for t in range(8):
        buf.add(obs[t], act[t], float(rew[t]), obs[t + 1], False, hid[t])
    assert buf.windows_available() == 3
    check_windows(buf, 32)


def test_round_longer_than_capacity_keeps_its_newest_steps() -> None:
    buf = SequenceReplay(10, S, A, HID, window=L)
    obs, act, rew, done, hid = round_arrays(0, 25)
    for t in range(25):
        buf.add(obs[t], act[t], float(rew[t]), obs[t + 1], bool(done[t]), hid[t])
    assert len(buf) == 10
    b = buf.sample(100, np.random.default_rng(0))
    assert b.obs[:, 0, 1].min() >= 15
    assert np.all(np.diff(b.obs[:, :, 1], axis=1) == 1)


def test_concurrent_writers_and_sampler() -> None:
    buf = SequenceReplay(300, S, A, HID, window=L)
    errors: list[BaseException] = []

    def writer(offset: int) -> None:
        try:
            for r in range(60):
                buf.add_round(*round_arrays(offset + r, 9))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def sampler() -> None:
        try:
            rng = np.random.default_rng(0)
            for _ in range(200):
                if buf.windows_available():
                    b = buf.sample(16, rng)
                    assert np.all(b.obs[:, :, 0] == b.obs[:, :1, 0])
                    assert np.all(np.diff(b.obs[:, :, 1], axis=1) == 1)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(0,)), threading.Thread(target=writer, args=(1000,))]
    threads.append(threading.Thread(target=sampler))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(buf) <= 300


def test_exported_rounds_load_into_a_new_replay_whole_and_newest_first_kept(tmp_path: Any) -> None:
    buf = SequenceReplay(1000, S, A, HID, window=L)
    for r, length in enumerate([7, 3, 12, 6, 30]):
        buf.add_round(*round_arrays(r, length))
    obs, act, rew, done, hid = round_arrays(9, 10)  # an open round (not done) is never exported
    for t in range(4):
        buf.add(obs[t], act[t], float(rew[t]), obs[t + 1], False, hid[t])
    kept = buf.export_rounds(40)  # the newest whole rounds that fit: 6 + 30 (12 more would not)
    assert kept["lengths"].tolist() == [6, 30]
    path = tmp_path / REPLAY
    save_replay(path, kept)
    loaded = load_replay(path, S, A, HID)
    fresh = SequenceReplay(1000, S, A, HID, window=L)
    assert fresh.extend_rounds(loaded) == 36 and fresh.rounds == 2
    check_windows(fresh)
    assert set(np.unique(fresh.sample(256, np.random.default_rng(1)).obs[:, 0, 0]).tolist()) == {3.0, 4.0}
    # A small ring keeps the newest rounds, as when they were first added.
    small = SequenceReplay(32, S, A, HID, window=L)
    small.extend_rounds(buf.export_rounds(1000))
    assert small.rounds == 1 and len(small) == 30


def test_fresh_share_draws_from_the_rounds_stored_after_a_kept_replay() -> None:
    kept = SequenceReplay(1000, S, A, HID, window=L)
    kept.add_round(*round_arrays(0, 8))  # 3 windows
    kept.add_round(*round_arrays(1, 14))  # 9 windows
    buf = SequenceReplay(1000, S, A, HID, window=L)
    buf.extend_rounds(kept.export_rounds(1000))
    # No fresh round yet: a fresh share draws over the kept rounds as uniform sampling does, the same batch.
    same = buf.sample(64, np.random.default_rng(3), fresh=0.5).obs
    assert np.array_equal(same, buf.sample(64, np.random.default_rng(3)).obs)
    buf.add_round(*round_arrays(10, 8))  # the fresh round: 3 windows of 15
    obs, act, rew, done, hid = round_arrays(11, 20)  # an open fresh round: 2 windows so far
    for t in range(7):
        buf.add(obs[t], act[t], float(rew[t]), obs[t + 1], False, hid[t])
    rounds = buf.sample(4000, np.random.default_rng(4), fresh=1.0).obs[:, 0, 0]
    assert set(np.unique(rounds).tolist()) == {10.0, 11.0}
    half = buf.sample(4000, np.random.default_rng(5), fresh=0.5)
    fresh_drawn = np.count_nonzero(half.obs[:, 0, 0] >= 10)
    # 2,000 drawn among the fresh windows, and 5 of 17 of the other 2,000 fall there too (~588).
    assert 2000 + 480 < fresh_drawn < 2000 + 700
    assert np.all(np.diff(half.obs[:, :, 1], axis=1) == 1) and np.all(half.obs[:, :, 0] == half.obs[:, :1, 0])
    # Uniform sampling is unchanged by the kept/fresh split.
    uniform = buf.sample(4000, np.random.default_rng(6)).obs[:, 0, 0]
    assert 4000 * 5 / 17 - 150 < np.count_nonzero(uniform >= 10) < 4000 * 5 / 17 + 150


@pytest.mark.parametrize("damage", ["truncated", "foreign sizes", "nan", "pickle"])
def test_a_damaged_replay_file_is_a_clear_error(tmp_path: Any, damage: str) -> None:
    buf = SequenceReplay(200, S, A, HID, window=L)
    buf.add_round(*round_arrays(0, 12))
    kept = buf.export_rounds(100)
    path = tmp_path / REPLAY
    if damage == "truncated":
        save_replay(path, kept)
        path.write_bytes(path.read_bytes()[:100])
    elif damage == "foreign sizes":
        save_replay(path, {**kept, "hidden": np.zeros((12, HID + 1), np.float32)})
    elif damage == "nan":
        save_replay(path, {**kept, "reward": np.full(12, np.nan, np.float32)})
    else:
        np.savez(path, **{**kept, "obs": np.array([{"evil": 1}], dtype=object)})  # type: ignore[arg-type]
    with pytest.raises(CheckpointError):
        load_replay(path, S, A, HID)


def _round_label(states: np.ndarray) -> np.ndarray:
    """A relabel whose labels say which round and step they came from: (round id, position + 0.5)."""
    return np.stack([states[:-1, 0], states[:-1, 1] + 0.5], 1)


def test_rounds_are_labelled_as_they_close_whichever_way_they_come_in() -> None:
    with pytest.raises(ValueError, match="go together"):
        SequenceReplay(100, S, A, HID, window=L, relabel=_round_label)
    buf = SequenceReplay(60, S, A, HID, window=L, relabel=_round_label, label_dim=2)
    buf.add_round(*round_arrays(0, 12))  # whole
    obs, act, rew, done, hid = round_arrays(1, 10)  # a step at a time, closed by its terminal step
    for t in range(10):
        buf.add(obs[t], act[t], float(rew[t]), obs[t + 1], bool(done[t]), hid[t])
    obs, act, rew, done, hid = round_arrays(2, 8)  # closed by end_round (an aborted round)
    for t in range(8):
        buf.add(obs[t], act[t], float(rew[t]), obs[t + 1], False, hid[t])
    buf.end_round()
    kept = buf.export_rounds(100)
    again = SequenceReplay(60, S, A, HID, window=L, relabel=_round_label, label_dim=2)
    again.extend_rounds(kept)  # read back from a kept replay: labelled on the way in
    obs, act, rew, done, hid = round_arrays(3, 36)  # still open, and wrapping onto round 0's slots
    for t in range(35):
        buf.add(obs[t], act[t], float(rew[t]), obs[t + 1], False, hid[t])
    for replay in (buf, again):
        b = replay.sample(256, np.random.default_rng(0))
        assert b.labels is not None and b.labels.shape == (256, L, 2)
        closed = b.obs[:, 0, 0] < 3
        assert (closed.any() and (~closed).any()) if replay is buf else closed.all()
        assert np.array_equal(b.labels[closed, :, 0], b.obs[closed, :-1, 0])
        assert np.array_equal(b.labels[closed, :, 1], b.obs[closed, :-1, 1] + 0.5)
        assert np.all(b.labels[~closed] == 0.0)  # the open round has none yet (round 0's are gone)
    assert set(np.unique(buf.sample(256, np.random.default_rng(1)).obs[:, 0, 0]).tolist()) == {1.0, 2.0, 3.0}
    plain = SequenceReplay(100, S, A, HID, window=L)
    plain.add_round(*round_arrays(0, 12))
    assert plain.sample(4, np.random.default_rng(0)).labels is None
