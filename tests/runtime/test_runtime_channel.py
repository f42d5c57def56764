"""The drop-oldest channel: never blocks, keeps the newest items in order, counts what it drops."""

from __future__ import annotations

import threading

import pytest

from sacbot.runtime.channel import DropOldestChannel


def test_put_and_drain_keep_order() -> None:
    channel: DropOldestChannel[int] = DropOldestChannel(8)
    for i in range(5):
        channel.put(i)
    assert len(channel) == 5
    assert channel.drain(2) == [0, 1]
    assert channel.drain() == [2, 3, 4]
    assert channel.drain() == []
    assert channel.dropped == 0


def test_full_channel_drops_the_oldest_and_counts() -> None:
    channel: DropOldestChannel[int] = DropOldestChannel(3)
    for i in range(10):
        channel.put(i)  # must not block although nobody drains
    assert channel.dropped == 7
    assert channel.drain() == [7, 8, 9]


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        DropOldestChannel(0)


def test_concurrent_producer_and_consumer_lose_nothing_but_drops() -> None:
    channel: DropOldestChannel[int] = DropOldestChannel(64)
    received: list[int] = []
    done = threading.Event()

    def consume() -> None:
        while not done.is_set() or len(channel):
            received.extend(channel.drain(16))

    consumer = threading.Thread(target=consume)
    consumer.start()
    total = 20_000
    for i in range(total):
        channel.put(i)
    done.set()
    consumer.join(10)
    assert not consumer.is_alive()
    # Every item was either received or counted as dropped, and order is kept.
    assert len(received) + channel.dropped == total
    assert received == sorted(received)
    assert received[-1] == total - 1
