"""Playing a tournament's pending pairs: one after another in this process (`play_here`) or several at once in
spawned game processes (`play_pool`), each failed pair retried, progress told to a `Reporter`."""

from __future__ import annotations

import multiprocessing
import queue
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from sacbot.campaign.tournament_pair import PairRecord, PairTask, RecorderFactory, play_pair
from sacbot.errors import UserError
from sacbot.interrupts import stops_once

STOP_WAIT_S = 15.0  # how long a stopped game's process may take: its booter gives the bots up to 10 s to exit


class Reporter(Protocol):
    """Progress callbacks of `run_tournament`, all on the calling thread: the CLI draws a progress bar."""

    def start(self, pending: Sequence[tuple[str, str]], rounds: int, workers: int) -> None: ...

    def round_done(self, pair: tuple[str, str], round_number: int) -> None: ...

    def pair_done(self, record: PairRecord) -> None: ...

    def pair_failed(self, pair: tuple[str, str], attempt: int, reason: str) -> None: ...


class SilentReporter:
    """A `Reporter` that says nothing."""

    def start(self, pending: Sequence[tuple[str, str]], rounds: int, workers: int) -> None:
        pass

    def round_done(self, pair: tuple[str, str], round_number: int) -> None:
        pass

    def pair_done(self, record: PairRecord) -> None:
        pass

    def pair_failed(self, pair: tuple[str, str], attempt: int, reason: str) -> None:
        pass


# Plays every task (each retried `retries` times), handing each record to `done` as it comes and raising one
# UserError for the pairs that failed every attempt: `sacbot.distributed.games.play_pairs_ray`.
PlayAll = Callable[
    [Sequence[PairTask], int, "Reporter", Callable[[PairRecord], None], RecorderFactory | None], None
]


def failed_pairs_error(failures: Sequence[tuple[PairTask, str]]) -> UserError:
    """One line for the pairs that failed every attempt (the other pairs were played and kept)."""
    task, reason = failures[0]
    more = f" (and {len(failures) - 1} more pair(s))" if len(failures) > 1 else ""
    return UserError(
        f"{task.a.label} vs {task.b.label} failed{more}: {reason} (bot output in {task.log_dir}; "
        "finished pairs are kept: run the same command again to resume)"
    )


def play_here(
    tasks: Sequence[PairTask],
    retries: int,
    rep: Reporter,
    done: Callable[[PairRecord], None],
    recorder_factory: RecorderFactory | None = None,
) -> None:
    def rounds_of(pair: tuple[str, str]) -> Callable[[int], None]:
        return lambda n: rep.round_done(pair, n)

    failures: list[tuple[PairTask, str]] = []
    for task in tasks:
        pair = (task.a.label, task.b.label)
        for attempt in range(1, retries + 2):
            try:
                record = play_pair(task, rounds_of(pair), recorder_factory)
            except Exception as exc:  # noqa: BLE001 - any failure is one line, as from a game process
                reason = str(exc) or type(exc).__name__
                rep.pair_failed(pair, attempt, reason)
                if attempt > retries:
                    failures.append((task, reason))
                continue
            done(record)
            break
    if failures:
        raise failed_pairs_error(failures)


def play_pool(
    tasks: Sequence[PairTask],
    count: int,
    retries: int,
    rep: Reporter,
    done: Callable[[PairRecord], None],
    recorder_factory: RecorderFactory | None = None,
) -> None:
    """Up to `count` games at once, each in its own process (spawned: a fresh interpreter, whatever threads
    this one runs), which reports its rounds and its result on one queue."""
    ctx = multiprocessing.get_context("spawn")
    events = ctx.Queue()
    todo = deque(tasks)
    attempts = {(t.a.label, t.b.label): 0 for t in tasks}
    running: dict[tuple[str, str], tuple[Any, PairTask]] = {}
    answers: dict[tuple[str, str], tuple[str, Any]] = {}
    failures: list[tuple[PairTask, str]] = []
    try:
        while running or todo:
            while todo and len(running) < count:
                task = todo.popleft()
                pair = (task.a.label, task.b.label)
                attempts[pair] += 1
                answers.pop(pair, None)
                proc = ctx.Process(
                    target=_game_process,
                    args=(task, events, recorder_factory),
                    name=f"sacbot-{pair[0]}-vs-{pair[1]}",
                )
                proc.daemon = True
                proc.start()
                running[pair] = (proc, task)
            _drain(events, rep, answers, timeout=0.2)
            for pair, (proc, task) in list(running.items()):
                if proc.is_alive():
                    continue
                proc.join()
                # Its last message was flushed to the pipe before it exited: read what is there.
                _drain(events, rep, answers, timeout=0.0)
                del running[pair]
                kind, payload = answers.pop(pair, ("failed", f"its process exited with code {proc.exitcode}"))
                if kind == "done":
                    done(PairRecord.model_validate(payload))
                    continue
                rep.pair_failed(pair, attempts[pair], str(payload))
                if attempts[pair] <= retries:
                    todo.append(task)  # again, after the others: a bot's trouble may pass
                else:
                    failures.append((task, str(payload)))
    except BaseException:
        # Ctrl-C reached the games too (one process group); SIGTERM reaches them here. Each one unwinds
        # through its booter, which stops that game's bot processes.
        for proc, _ in running.values():
            proc.terminate()
        for proc, _ in running.values():
            proc.join(STOP_WAIT_S)
            if proc.is_alive():
                proc.kill()
                proc.join(1.0)
        raise
    finally:
        events.close()
        events.join_thread()
    if failures:
        raise failed_pairs_error(sorted(failures, key=lambda f: f[0].index))


def _game_process(task: PairTask, events: Any, recorder_factory: RecorderFactory | None = None) -> None:
    """A game process: play the pair; put ("round" | "done" | "failed", a, b, payload) messages."""
    a, b = task.a.label, task.b.label
    try:
        with stops_once():  # a second signal must not cut the booter's clean-up short
            record = play_pair(task, lambda n: events.put(("round", a, b, n)), recorder_factory)
    except KeyboardInterrupt:
        return  # stopped: the booter has stopped the bots; nothing to report
    except Exception as exc:  # noqa: BLE001 - any failure is one line for the parent
        events.put(("failed", a, b, str(exc) or type(exc).__name__))
        return
    events.put(("done", a, b, record.model_dump(mode="json")))


def _drain(
    events: Any, rep: Reporter, answers: dict[tuple[str, str], tuple[str, Any]], timeout: float
) -> None:
    """Hand rounds to the reporter and keep each game's answer; wait up to `timeout` for the first message."""
    wait_s: float | None = timeout
    while True:
        try:
            kind, a, b, payload = events.get(timeout=wait_s) if wait_s else events.get_nowait()
        except queue.Empty:
            return
        wait_s = None
        if kind == "round":
            rep.round_done((a, b), int(payload))
        else:
            answers[(a, b)] = (kind, payload)
