"""Games as Ray tasks (`sacbot tournament --ray`, `sacbot eval --ray`).

Each game is one Ray task that runs the project's own per-game function (`play_pair` for a tournament pair,
`ArenaBackend.run_eval` for an eval game) on the node Ray picks: its own embedded arena on 127.0.0.1 and its
own bot processes there, so games never share a port or a process. Ray schedules them one per CPU (a game's
two bot processes and arena mostly wait on each other's turns) and the caller keeps its records, resume and
ratings exactly as in a local run. Bot folders and the checkpoint must be readable on every node (the same
paths: a shared file system or the same install); the eval checkpoint travels as bytes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sacbot.campaign.loop import GameScore
    from sacbot.campaign.tournament_pair import PairRecord, PairTask, RecorderFactory
    from sacbot.campaign.tournament_pool import Reporter


def _play_pair_task(task: PairTask, recorder_factory: RecorderFactory | None) -> dict[str, Any]:
    from sacbot.campaign.tournament_pair import play_pair

    return play_pair(task, None, recorder_factory).model_dump(mode="json")


def play_pairs_ray(
    tasks: Sequence[PairTask],
    retries: int,
    rep: Reporter,
    done: Callable[[PairRecord], None],
    recorder_factory: RecorderFactory | None = None,
    address: str | None = None,
) -> None:
    """Every pair as a Ray task (each tried `retries` more times when it fails); `done` gets each record as it
    comes, in any order; the pairs that failed every attempt are one UserError at the end."""
    from sacbot.campaign.tournament_pair import PairRecord
    from sacbot.campaign.tournament_pool import failed_pairs_error
    from sacbot.distributed import init_ray

    ray = init_ray(address)
    remote = ray.remote(num_cpus=1, max_retries=0)(_play_pair_task)
    attempts: dict[Any, tuple[PairTask, int]] = {}
    for task in tasks:
        attempts[remote.remote(task, recorder_factory)] = (task, 1)
    failures: list[tuple[PairTask, str]] = []
    while attempts:
        ready, _ = ray.wait(list(attempts), num_returns=1)
        task, attempt = attempts.pop(ready[0])
        pair = (task.a.label, task.b.label)
        try:
            record = PairRecord.model_validate(ray.get(ready[0]))
        except Exception as exc:  # noqa: BLE001 - a game's failure (or its node's) is one line
            cause = getattr(exc, "cause", None) or exc
            reason = str(cause).strip().splitlines()[-1] if str(cause).strip() else type(cause).__name__
            rep.pair_failed(pair, attempt, reason)
            if attempt > retries:
                failures.append((task, reason))
            else:
                attempts[remote.remote(task, recorder_factory)] = (task, attempt + 1)
            continue
        rep.round_done(pair, task.rounds)
        done(record)
    if failures:
        raise failed_pairs_error(sorted(failures, key=lambda f: f[0].index))


def _eval_task(checkpoint_bytes: bytes, campaign_data: dict[str, Any], opponent: str, rounds: int) -> Any:
    """One eval game in a private run folder on this node: the checkpoint copied in, an arena of its own."""
    from sacbot.campaign.config import parse_campaign
    from sacbot.campaign.runner import ArenaBackend
    from sacbot.checkpoint import atomic_write_bytes
    from sacbot.rundir import RunPaths

    campaign = parse_campaign(campaign_data, "eval")
    with tempfile.TemporaryDirectory(prefix="sacbot-eval-ray-") as tmp:
        paths = RunPaths(Path(tmp))
        copy = paths.eval_dir / "checkpoint.zip"
        atomic_write_bytes(copy, checkpoint_bytes)
        backend = ArenaBackend(campaign, paths)
        try:
            return backend.run_eval(copy, opponent, rounds, lambda event: None)
        finally:
            backend.close()


def evaluate_ray(
    checkpoint_bytes: bytes,
    campaign_data: dict[str, Any],
    opponents: Sequence[str],
    rounds: int,
    retries: int = 1,
    address: str | None = None,
) -> list[tuple[str, GameScore]]:
    """One eval game per opponent, all at once as Ray tasks; results in the order of `opponents`."""
    from sacbot.distributed import init_ray
    from sacbot.errors import UserError

    ray = init_ray(address)
    remote = ray.remote(num_cpus=1, max_retries=retries, retry_exceptions=True)(_eval_task)
    data = ray.put(checkpoint_bytes)  # once, whatever the number of games
    refs = [remote.remote(data, campaign_data, name, rounds) for name in opponents]
    out: list[tuple[str, GameScore]] = []
    for name, ref in zip(opponents, refs, strict=True):
        try:
            out.append((name, ray.get(ref)))
        except Exception as exc:  # noqa: BLE001 - one line, as the local eval's
            cause = getattr(exc, "cause", None) or exc
            raise UserError(f"eval against {name} failed: {cause}", exit_code=1) from None
    return out


__all__ = ["evaluate_ray", "play_pairs_ray"]
