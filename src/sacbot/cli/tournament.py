"""`sacbot tournament`: a round-robin of bot directories (`sacbot.campaign.tournament`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from sacbot.errors import UserError
from sacbot.interrupts import stops_on_sigterm

if TYPE_CHECKING:
    from sacbot.campaign.tournament import TournamentResult
    from sacbot.campaign.tournament_pair import PairRecord


def tournament(
    dirs: list[Path] | None = typer.Argument(
        None, help="Bot directories (<Dir>/<Dir>.json plus a launcher), at least two."
    ),
    rounds: int = typer.Option(10, "--rounds", "-r", help="Rounds of each pair's game."),
    game_type: str = typer.Option("1v1", "--game-type", "-g", help="classic, 1v1, melee or custom."),
    json_output: bool = typer.Option(
        False, "--json", help="Print one JSON document (pairs, ratings, paths) instead of tables."
    ),
    out: Path = typer.Option(
        Path("runs/tournament"), "--out", help="Out folder: pairs.jsonl (resume), heatmap.png, results.json."
    ),
    workers: int | None = typer.Option(
        None, "--workers", "-w", help="Games at once (default: one per CPU, at most 16); 1 plays in turn."
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="Seed the games (pair i gets seed + i; default: fresh random seeds)."
    ),
    connect_timeout: float = typer.Option(
        30.0, "--connect-timeout", help="Seconds to wait for a game's bots to connect."
    ),
    record: Path | None = typer.Option(
        None, "--record", metavar="DIR", help="Record every game into DIR (game-<time>-A-vs-B.battle.gz)."
    ),
    use_ray: bool = typer.Option(
        False, "--ray", help="Each game a Ray task (RAY_ADDRESS joins a cluster; needs sacbot\\[ray])."
    ),
) -> None:
    """Round-robin: every pair of bot directories plays one game; table, OpenSkill ratings, heatmap."""
    from sacbot.campaign.tournament import run_tournament
    from sacbot.campaign.tournament_pair import RecorderFactory

    play_all = None
    if use_ray:
        from sacbot.distributed import require_ray

        require_ray()
        from sacbot.distributed.games import play_pairs_ray

        play_all = play_pairs_ray

    recorder_factory: RecorderFactory | None = None
    if record is not None:
        import functools

        from sacbot.viewer.recording import game_recorder, writable_folder

        recorder_factory = functools.partial(game_recorder, str(writable_folder(record)))

    reporter = None if json_output else _ProgressReporter()
    # Ctrl-C and SIGTERM both unwind through the booters' clean-up: no bot process is left behind.
    with stops_on_sigterm():
        try:
            result = run_tournament(
                list(dirs or []),
                rounds,
                game_type,
                out,
                workers=workers,
                seed=seed,
                connect_timeout=connect_timeout,
                reporter=reporter,
                recorder_factory=recorder_factory,
                play_all=play_all,
            )
        except KeyboardInterrupt:
            raise UserError(
                f"interrupted; finished pairs are kept in {out}; run the same command again to resume", 130
            ) from None
        finally:
            if reporter is not None:
                reporter.close()
    if json_output:
        print(json.dumps(result.model_dump(mode="json")))
        return
    _print_result(result)


class _ProgressReporter:
    """A rich progress bar on stderr: rounds played of the pairs to play, and the pairs done."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("rounds"),
            TextColumn("{task.fields[pairs]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.task: Any = None
        self.rounds = 0
        self.total_pairs = 0
        self.done_pairs = 0
        self.seen: dict[tuple[str, str], int] = {}

    # sacbot.campaign.tournament_pool.Reporter
    def start(self, pending: Sequence[tuple[str, str]], rounds: int, workers: int) -> None:
        if not pending:
            return
        self.rounds, self.total_pairs = rounds, len(pending)
        games = "game" if workers == 1 else "games"
        self.progress.start()
        self.task = self.progress.add_task(
            f"tournament ({workers} {games} at once)", total=rounds * len(pending), pairs=self._pairs()
        )

    def _pairs(self) -> str:
        return f"{self.done_pairs}/{self.total_pairs} pairs"

    def round_done(self, pair: tuple[str, str], round_number: int) -> None:
        if self.task is None:
            return
        before = self.seen.get(pair, 0)
        if round_number > before:  # a retried game counts only the rounds it adds
            self.seen[pair] = round_number
            self.progress.advance(self.task, round_number - before)

    def pair_done(self, record: PairRecord) -> None:
        if self.task is None:
            return
        self.done_pairs += 1
        before = self.seen.get(record.key, 0)
        self.seen[record.key] = self.rounds
        self.progress.update(self.task, advance=max(0, self.rounds - before), pairs=self._pairs())
        self.progress.console.print(
            f"{record.a} vs {record.b}: {record.wins_a}-{record.wins_b}"
            + (f" ({record.draws} drawn)" if record.draws else "")
            + f", score share {record.share_a:.2f}-{record.share_b:.2f}",
            markup=False,
            highlight=False,
        )

    def pair_failed(self, pair: tuple[str, str], attempt: int, reason: str) -> None:
        if self.task is not None:
            text = f"{pair[0]} vs {pair[1]} failed (attempt {attempt}): {reason}"
            self.progress.console.print(text, style="yellow", markup=False, highlight=False)

    def close(self) -> None:
        if self.task is not None:
            self.progress.stop()


def _print_result(result: TournamentResult) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 200)
    spec = result.spec
    order = [r.label for r in result.ratings]
    if result.resumed:
        console.print(f"resumed: {result.resumed} finished pair(s) read from {result.paths['pairs']}")
    console.print(
        f"{spec.game_type}, {spec.rounds} rounds a pair; each cell: the row bot's win rate / score share "
        "against the column bot"
    )
    matrix = Table()
    matrix.add_column("bot", no_wrap=True)
    for label in order:
        matrix.add_column(label, justify="right", no_wrap=True)
    for row in order:
        cells = []
        for col in order:
            win, share = result.win_rate[row][col], result.score_share[row][col]
            cells.append("-" if win is None or share is None else f"{win:.0%} / {share:.2f}")
        matrix.add_row(row, *cells)
    console.print(matrix)
    console.print("OpenSkill ratings (Plackett-Luce, one match per round; ranked by ordinal = mu - 3 sigma)")
    ratings = Table()
    for col in ("rank", "bot", "ordinal", "mu", "sigma", "rounds", "won", "drawn", "lost"):
        ratings.add_column(col, justify="left" if col == "bot" else "right", no_wrap=col == "bot")
    for i, r in enumerate(result.ratings, start=1):
        ratings.add_row(
            str(i),
            r.label,
            f"{r.ordinal:.2f}",
            f"{r.mu:.2f}",
            f"{r.sigma:.2f}",
            str(r.rounds),
            str(r.wins),
            str(r.draws),
            str(r.losses),
        )
    console.print(ratings)
    console.print(f"pairs: {result.paths['pairs']}")
    console.print(f"heatmap: {result.paths['heatmap']}")
    console.print(f"results: {result.paths['results']}")
