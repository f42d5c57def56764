"""Sequence replay: whole rounds of transitions with the actor's hidden state at every step.

Storage is one ring of `capacity` steps. Every step remembers its round and its position in that round; each
stored round is one contiguous run of slots (mod capacity), so its windows are its first len - L + 1 starts,
and windows never mix two rounds. When the ring wraps onto an old round, that whole round is evicted (all of
its slots are marked empty), so no partial rounds stay behind. Sampling picks windows uniformly among all
valid ones (cumulative window counts + searchsorted, vectorised, no rejection) and gathers them with one fancy
index per array. Rounds read back from a kept replay (`extend_rounds`) are "kept"; those stored after them are
"fresh", and `sample(..., fresh=f)` can draw a share f of each batch from the fresh rounds' windows alone.
With `relabel` (a function of one round's states s_0..s_T giving (T, LABEL_DIM) per-step labels, e.g.
`sacbot.agent.hindsight.hindsight_aim`), every round is labelled as it closes, whichever way it came in, and
batches carry the labels (zeros on a round still open).

Thread-safe: `add`, `add_round` and `sample` hold one lock; sampling copies what it returns.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

EMPTY = -1


@dataclass(frozen=True)
class Batch:
    """A batch of B windows of L transitions (numpy, float32).

    obs (B, L+1, S): states s_0..s_L (the last is the next state of the last transition); action (B, L, A);
    reward (B, L); done (B, L); hidden (B, H): the actor's hidden state before step 0 of each window;
    labels (B, L, LABEL_DIM): the replay's per-step labels (`relabel`), None without them.
    """

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    hidden: np.ndarray
    labels: np.ndarray | None = None


Relabel = Callable[[np.ndarray], np.ndarray]


class SequenceReplay:
    def __init__(
        self,
        capacity: int,
        state_dim: int,
        action_dim: int,
        hidden_dim: int,
        window: int = 24,
        relabel: Relabel | None = None,
        label_dim: int = 0,
    ) -> None:
        if capacity < window:
            raise ValueError("capacity must hold at least one window")
        self.capacity, self.window = capacity, window
        self.obs = np.zeros((capacity, state_dim), np.float32)
        self.next_obs = np.zeros((capacity, state_dim), np.float32)
        self.action = np.zeros((capacity, action_dim), np.float32)
        self.reward = np.zeros(capacity, np.float32)
        self.done = np.zeros(capacity, np.float32)
        self.hidden = np.zeros((capacity, hidden_dim), np.float32)
        self.round_of = np.full(capacity, EMPTY, np.int64)
        self.pos = np.zeros(capacity, np.int64)
        if (relabel is None) != (label_dim == 0):
            raise ValueError("relabel and label_dim (its labels' width, > 0) go together")
        self.relabel = relabel
        self.labels = np.zeros((capacity, label_dim), np.float32) if relabel is not None else None
        self._ptr = 0
        self._size = 0  # occupied slots
        self._round = 0  # id of the open round
        self._round_len = 0
        self._rounds: deque[tuple[int, int, int]] = deque()  # (round id, first slot, length), oldest first
        self._fresh_from = 0  # the first round id stored after the last `extend_rounds` (a kept replay)
        self._lock = threading.Lock()
        self.steps_added = 0

    def __len__(self) -> int:
        return self._size

    @property
    def rounds(self) -> int:
        """Rounds (closed or open) with at least one stored step."""
        return len(self._rounds)

    def windows_available(self) -> int:
        """How many distinct valid windows the buffer holds."""
        with self._lock:
            return sum(max(0, length - self.window + 1) for _, _, length in self._rounds)

    # -- writing -------------------------------------------------------------------------------------------
    def _evict_slots(self, start: int, count: int) -> None:
        """Free `count` slots from `start` (mod capacity), evicting whole every round that owns one."""
        idx = (start + np.arange(count)) % self.capacity
        owners = set(np.unique(self.round_of[idx]).tolist()) - {EMPTY}
        while self._rounds and owners:
            rid, first, length = self._rounds[0]
            self._rounds.popleft()
            slots = (first + np.arange(length)) % self.capacity
            mine = self.round_of[slots] == rid
            self.round_of[slots[mine]] = EMPTY
            self._size -= int(np.count_nonzero(mine))
            owners.discard(rid)

    def add(
        self,
        obs: np.ndarray,
        action: np.ndarray,
        reward: float,
        next_obs: np.ndarray,
        done: bool,
        hidden: np.ndarray,
    ) -> None:
        """Append one transition to the open round; `done` closes it (the next add starts a new round)."""
        with self._lock:
            i = self._ptr
            if self.round_of[i] == self._round and self._round_len:
                # The open round is longer than the ring: it loses its own oldest step.
                rid, first, length = self._rounds[-1]
                self._rounds[-1] = (rid, (first + 1) % self.capacity, length - 1)
                self.round_of[i] = EMPTY
                self._size -= 1
            elif self.round_of[i] != EMPTY:
                self._evict_slots(i, 1)
            if self._round_len == 0:
                self._rounds.append((self._round, i, 0))
            rid, first, length = self._rounds[-1]
            self._rounds[-1] = (rid, first, length + 1)
            self.obs[i] = obs
            self.next_obs[i] = next_obs
            self.action[i] = action
            self.reward[i] = reward
            self.done[i] = float(done)
            self.hidden[i] = hidden
            if self.labels is not None:
                self.labels[i] = 0.0  # labelled when its round closes
            self.round_of[i] = self._round
            self.pos[i] = self._round_len
            self._size += 1
            self._round_len += 1
            self._ptr = (i + 1) % self.capacity
            self.steps_added += 1
            if done:
                self._close_open_round()

    def end_round(self) -> None:
        """Close the open round without a terminal flag (e.g. the game was aborted)."""
        with self._lock:
            if self._round_len:
                self._close_open_round()

    def _close_open_round(self) -> None:
        """Label the open round (with `relabel`) and start the next one; the caller holds the lock."""
        if self.relabel is not None and self.labels is not None:
            _, first, length = self._rounds[-1]
            idx = (first + np.arange(length)) % self.capacity
            states = np.concatenate([self.obs[idx], self.next_obs[idx[-1:]]])
            self.labels[idx] = self.relabel(states)
        self._round += 1
        self._round_len = 0

    def add_round(
        self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, done: np.ndarray, hidden: np.ndarray
    ) -> None:
        """Store a whole round at once: obs (T+1, S), action (T, A), reward (T,), done (T,), hidden (T, H)."""
        t = len(action)
        if t == 0:
            return
        if t > self.capacity:
            raise ValueError("round longer than the replay capacity")
        self.end_round()
        labels = self.relabel(obs) if self.relabel is not None else None  # outside the lock
        with self._lock:
            i = self._ptr
            if np.any(self.round_of[(i + np.arange(t)) % self.capacity] != EMPTY):
                self._evict_slots(i, t)
            idx = (i + np.arange(t)) % self.capacity
            self.obs[idx] = obs[:-1]
            self.next_obs[idx] = obs[1:]
            self.action[idx] = action
            self.reward[idx] = reward
            self.done[idx] = done
            self.hidden[idx] = hidden
            if self.labels is not None:
                self.labels[idx] = labels
            self.round_of[idx] = self._round
            self.pos[idx] = np.arange(t)
            self._rounds.append((self._round, i, t))
            self._size += t
            self._ptr = (i + t) % self.capacity
            self._round += 1
            self.steps_added += t

    # -- keeping it across processes -------------------------------------------------------------------------
    def export_rounds(self, max_steps: int) -> dict[str, np.ndarray]:
        """The newest closed rounds, whole, up to `max_steps` steps in all, oldest first, as plain arrays:
        per step obs, next_obs, action, reward, done, hidden; per round `lengths`. (`extend_rounds` reads
        them back; `sacbot.checkpoint.replay_file` stores them.)"""
        with self._lock:
            closed = list(self._rounds)
            if self._round_len:
                closed = closed[:-1]  # the open round is not whole yet
            chosen: list[tuple[int, int, int]] = []
            total = 0
            for rid, first, length in reversed(closed):
                if total + length > max_steps:
                    break
                chosen.append((rid, first, length))
                total += length
            chosen.reverse()
            idx = (
                np.concatenate([(first + np.arange(length)) % self.capacity for _, first, length in chosen])
                if chosen
                else np.zeros(0, np.int64)
            )
            return {
                "obs": self.obs[idx].copy(),
                "next_obs": self.next_obs[idx].copy(),
                "action": self.action[idx].copy(),
                "reward": self.reward[idx].copy(),
                "done": self.done[idx].copy(),
                "hidden": self.hidden[idx].copy(),
                "lengths": np.array([length for _, _, length in chosen], np.int64),
            }

    def extend_rounds(self, arrays: dict[str, np.ndarray]) -> int:
        """Store the rounds of an `export_rounds` result (oldest first; the ring keeps the newest); returns
        how many steps were added."""
        start = 0
        for length in arrays["lengths"].tolist():
            end = start + length
            if length <= self.capacity:
                obs = np.concatenate([arrays["obs"][start:end], arrays["next_obs"][end - 1 : end]])
                self.add_round(
                    obs,
                    arrays["action"][start:end],
                    arrays["reward"][start:end],
                    arrays["done"][start:end],
                    arrays["hidden"][start:end],
                )
            start = end
        with self._lock:
            self._fresh_from = self._round
        return start

    # -- sampling ------------------------------------------------------------------------------------------
    def sample(self, batch: int, rng: np.random.Generator, fresh: float = 0.0) -> Batch:
        """B windows drawn uniformly among all valid windows (no rejection). With `fresh` > 0,
        round(B * fresh) of them are drawn uniformly among the fresh rounds' windows instead (those stored
        after the last kept replay was read back), while the fresh rounds hold any. ValueError if there is no
        window at all."""
        with self._lock:
            firsts = np.fromiter((r[1] for r in self._rounds), np.int64, len(self._rounds))
            counts = np.fromiter((r[2] for r in self._rounds), np.int64, len(self._rounds)) - (
                self.window - 1
            )
            counts = np.maximum(counts, 0)
            cum = np.cumsum(counts)
            total = int(cum[-1]) if len(cum) else 0
            if total == 0:
                raise ValueError("no complete window in the replay yet")
            k = rng.integers(0, total, size=batch)
            if fresh > 0.0:
                # Rounds are stored in id order, so the fresh ones are the deque's tail: its windows are
                # the cumulative counts' last stretch, [before, total).
                ids = np.fromiter((r[0] for r in self._rounds), np.int64, len(self._rounds))
                first_fresh = int(np.searchsorted(ids, self._fresh_from, side="left"))
                before = int(cum[first_fresh - 1]) if first_fresh else 0
                n_fresh = min(batch, int(round(batch * fresh)))
                if before < total and n_fresh:
                    k[:n_fresh] = rng.integers(before, total, size=n_fresh)
            r = np.searchsorted(cum, k, side="right")
            starts = (firsts[r] + k - (cum[r] - counts[r])) % self.capacity
            idx = (starts[:, None] + np.arange(self.window)) % self.capacity  # (B, L)
            obs = np.empty((batch, self.window + 1, self.obs.shape[1]), np.float32)
            obs[:, :-1] = self.obs[idx]
            obs[:, -1] = self.next_obs[idx[:, -1]]
            return Batch(
                obs=obs,
                action=self.action[idx],
                reward=self.reward[idx],
                done=self.done[idx],
                hidden=self.hidden[starts],
                labels=None if self.labels is None else self.labels[idx],
            )
