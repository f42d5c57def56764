"""`sacbot tournament`: a round-robin of bot directories on the embedded arena, with ratings and a heatmap.

Every pair of bots plays one game of `rounds` rounds, each game on its own embedded arena (a free port, random
secrets) with its own bot processes, through `sacbot.arena.battle.run_battle` as `sacbot arena run` does.
Games run in parallel worker processes (`workers`; 1 plays them one after another in this process).

The out folder holds:
- `tournament.json`: what the tournament is (`TournamentSpec`: bots, rounds, game type, seed); a folder that
  holds another tournament is refused (`UserError`, exit code 2);
- `pairs.jsonl`: one `PairRecord` line per finished pair, appended (and fsynced) as each game ends; a rerun
  plays only the pairs missing there (resume);
- `heatmap.png`: the win-rate matrix (row bot against column bot);
- `results.json`: the whole result (`TournamentResult`, what `--json` prints);
- `logs/<A>-vs-<B>/`: the bots' output of the latest game of each pair.

Ratings come from OpenSkill (Plackett-Luce, its default parameters): every round of every pair is one match
(the winner first; a round nobody won is a draw), fed in a fixed order (pairs by their names, rounds in the
order played), so the same results always give the same ratings, whatever order the games finished in.

This module is the run driver (`run_tournament`); the parts are `tournament_pair` (pairing, one pair's game,
its record), `tournament_records` (the out folder and resume), `tournament_ratings` (ratings, matrices, the
heatmap) and `tournament_pool` (playing the pending pairs, here or in game processes).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from sacbot.campaign.tournament_pair import (
    Bot,
    PairRecord,
    PairTask,
    RecorderFactory,
    TournamentModel,
    pair_seed,
    pairings,
)
from sacbot.campaign.tournament_pool import PlayAll, Reporter, SilentReporter, play_here, play_pool
from sacbot.campaign.tournament_ratings import Rating, heatmap_png, matrices, rate
from sacbot.campaign.tournament_records import (
    HEATMAP_FILE,
    PAIRS_FILE,
    RESULTS_FILE,
    SPEC_FILE,
    TournamentSpec,
    append_record,
    open_out_dir,
)
from sacbot.errors import UserError

DEFAULT_OUT = Path("runs/tournament")
MAX_AUTO_WORKERS = 16


class TournamentResult(TournamentModel):
    """The whole result: what `results.json` holds and `--json` prints."""

    spec: TournamentSpec
    bots: tuple[Bot, ...]
    pairs: tuple[PairRecord, ...]
    ratings: tuple[Rating, ...]
    win_rate: dict[str, dict[str, float | None]]
    score_share: dict[str, dict[str, float | None]]
    played: tuple[tuple[str, str], ...]
    resumed: int
    paths: dict[str, str]


def check_settings(rounds: int, workers: int | None, connect_timeout: float = 30.0) -> None:
    if rounds < 1:
        raise UserError(f"--rounds must be at least 1 (got {rounds})", 2)
    if workers is not None and workers < 1:
        raise UserError(f"--workers must be at least 1 (got {workers})", 2)
    if not connect_timeout > 0:
        raise UserError("--connect-timeout must be positive", 2)


def resolve_bots(dirs: Sequence[str | os.PathLike[str]]) -> list[Bot]:
    """Read every bot directory (its JSON and its launcher) before anything starts; sorted by label."""
    from sacbot.arena.booter import launch_command, read_bot_dir

    if len(dirs) < 2:
        raise UserError(f"a tournament needs at least 2 bot directories (got {len(dirs)})", 2)
    bots: list[Bot] = []
    for d in dirs:
        entry = read_bot_dir(d)
        if entry.team_members:
            raise UserError(f"{d}: team directories cannot play in a tournament", 2)
        launch_command(entry)  # no launcher: one clear line now, not a failed game later
        bots.append(Bot(label=entry.dir.name, name=entry.name, dir=str(entry.dir)))
    for what in ("label", "name"):
        seen: dict[str, str] = {}
        for bot in bots:
            value = getattr(bot, what)
            if value in seen:
                if seen[value] == bot.dir:
                    raise UserError(f"bot directory {bot.dir} is named twice", 2)
                kind = "folder name" if what == "label" else "bot name"
                raise UserError(f"{seen[value]} and {bot.dir} have the same {kind} {value!r}", 2)
            seen[value] = bot.dir
    return sorted(bots, key=lambda b: b.label)


def default_workers(pending: int) -> int:
    """What the machine has: one game per CPU this process may use, at most MAX_AUTO_WORKERS and the pairs."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_AUTO_WORKERS, pending))


def run_tournament(
    dirs: Sequence[str | os.PathLike[str]],
    rounds: int,
    game_type: str = "1v1",
    out: str | os.PathLike[str] = DEFAULT_OUT,
    *,
    workers: int | None = None,
    seed: int | None = None,
    connect_timeout: float = 30.0,
    retries: int = 1,
    reporter: Reporter | None = None,
    recorder_factory: RecorderFactory | None = None,
    play_all: PlayAll | None = None,
) -> TournamentResult:
    """Play every pair not yet in `out`'s `pairs.jsonl`, then rate, draw and write the results;
    `recorder_factory` records each game (`sacbot tournament --record`)."""
    from sacbot.checkpoint.atomic import atomic_write_bytes, atomic_write_json
    from sacbot.engine import game_setup_for

    check_settings(rounds, workers, connect_timeout)
    game_setup_for(game_type, number_of_rounds=rounds)  # an unknown game type: one line before anything
    bots = resolve_bots(dirs)
    by_label = {b.label: b for b in bots}
    spec = TournamentSpec(bots=tuple(by_label), rounds=rounds, game_type=game_type, seed=seed)
    out_dir = Path(out)
    finished = open_out_dir(out_dir, spec)
    all_pairs = pairings(spec.bots)
    pending = [p for p in all_pairs if p not in finished]
    resumed = len(finished)
    rep: Reporter = reporter or SilentReporter()
    tasks = [
        PairTask(
            index=all_pairs.index(p),
            a=by_label[p[0]],
            b=by_label[p[1]],
            rounds=rounds,
            game_type=game_type,
            seed=pair_seed(seed, all_pairs.index(p)),
            connect_timeout=connect_timeout,
            log_dir=str(out_dir / "logs" / f"{p[0]}-vs-{p[1]}"),
        )
        for p in pending
    ]
    count = min(workers or default_workers(len(tasks)), max(1, len(tasks)))
    rep.start(pending, rounds, count)
    played: list[tuple[str, str]] = []

    def done(record: PairRecord) -> None:
        append_record(out_dir, record)
        finished[record.key] = record
        played.append(record.key)
        rep.pair_done(record)

    if tasks:
        if play_all is not None:  # elsewhere, e.g. each game a Ray task (`sacbot tournament --ray`)
            play_all(tasks, retries, rep, done, recorder_factory)
        elif count == 1:
            play_here(tasks, retries, rep, done, recorder_factory)
        else:
            play_pool(tasks, count, retries, rep, done, recorder_factory)

    records = [finished[p] for p in all_pairs]
    ratings = rate(spec.bots, records)
    win, share = matrices(spec.bots, records)
    order = [r.label for r in ratings]
    paths = {
        "out": str(out_dir),
        "spec": str(out_dir / SPEC_FILE),
        "pairs": str(out_dir / PAIRS_FILE),
        "heatmap": str(out_dir / HEATMAP_FILE),
        "results": str(out_dir / RESULTS_FILE),
    }
    title = f"Win rate (score share below), row bot against column bot\n{game_type}, {rounds} rounds a pair"
    atomic_write_bytes(out_dir / HEATMAP_FILE, heatmap_png(order, win, title, share))
    result = TournamentResult(
        spec=spec,
        bots=tuple(bots),
        pairs=tuple(records),
        ratings=tuple(ratings),
        win_rate=win,
        score_share=share,
        played=tuple(played),
        resumed=resumed,
        paths=paths,
    )
    atomic_write_json(out_dir / RESULTS_FILE, result.model_dump(mode="json"))
    return result
