"""The bounded channel from the realtime thread to the trainer: put never blocks, the oldest item goes first.

The realtime thread must never wait on the trainer, so a full channel drops its oldest item (and counts it)
instead of blocking. The lock guards a few deque operations only, so neither side can hold it long.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class DropOldestChannel(Generic[T]):
    """A thread-safe FIFO of at most `capacity` items; `put` drops the oldest item when full."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = capacity
        self._items: deque[T] = deque()
        self._lock = threading.Lock()
        self._dropped = 0

    def put(self, item: T) -> None:
        """Add `item`; never blocks. When full the oldest item is discarded and counted in `dropped`."""
        with self._lock:
            if len(self._items) >= self.capacity:
                self._items.popleft()
                self._dropped += 1
            self._items.append(item)

    def drain(self, max_items: int | None = None) -> list[T]:
        """Take up to `max_items` items (all when None), oldest first; never blocks on an empty channel."""
        with self._lock:
            n = len(self._items) if max_items is None else min(max_items, len(self._items))
            return [self._items.popleft() for _ in range(n)]

    @property
    def dropped(self) -> int:
        """Items discarded because the channel was full, since creation."""
        return self._dropped

    def __len__(self) -> int:
        return len(self._items)
