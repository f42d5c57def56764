"""What a tournament's records add up to: OpenSkill ratings (`rate`), the win-rate and score-share matrices
(`matrices`) and the heatmap picture (`heatmap_png`)."""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping, Sequence

from sacbot.campaign.tournament_pair import PairRecord, TournamentModel


class Rating(TournamentModel):
    """A bot's OpenSkill rating (Plackett-Luce); ranked by `ordinal` = mu - 3 sigma (the conservative one)."""

    label: str
    mu: float
    sigma: float
    ordinal: float
    rounds: int
    wins: int
    draws: int
    losses: int


def matrices(
    labels: Sequence[str], records: Iterable[PairRecord]
) -> tuple[dict[str, dict[str, float | None]], dict[str, dict[str, float | None]]]:
    """(win rate, score share) of the row bot against the column bot; None on the diagonal and for pairs not
    played."""
    win: dict[str, dict[str, float | None]] = {r: {c: None for c in labels} for r in labels}
    share: dict[str, dict[str, float | None]] = {r: {c: None for c in labels} for r in labels}
    for rec in records:
        for me, other in ((rec.a, rec.b), (rec.b, rec.a)):
            if me in win and other in win:
                win[me][other] = rec.wins_of(me) / rec.rounds if rec.rounds else 0.0
                share[me][other] = rec.share_of(me)
    return win, share


def rate(labels: Sequence[str], records: Iterable[PairRecord]) -> list[Rating]:
    """OpenSkill ratings from every round, fed in the canonical order; best first (ordinal, then label)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    current = {label: model.rating(name=label) for label in sorted(labels)}
    tally = {label: [0, 0, 0, 0] for label in current}  # rounds, wins, draws, losses
    for rec in sorted(records, key=lambda r: r.key):
        if rec.a not in current or rec.b not in current:
            continue
        for winner in rec.round_winners:
            # Rank 1 first; equal ranks are a draw.
            ranks = [1.0, 1.0] if winner is None else [1.0, 2.0] if winner == rec.a else [2.0, 1.0]
            (new_a,), (new_b,) = model.rate([[current[rec.a]], [current[rec.b]]], ranks=ranks)
            current[rec.a], current[rec.b] = new_a, new_b
            for me in (rec.a, rec.b):
                t = tally[me]
                t[0] += 1
                t[1 if winner == me else 2 if winner is None else 3] += 1
    ratings = [
        Rating(
            label=label,
            mu=r.mu,
            sigma=r.sigma,
            ordinal=r.ordinal(),
            rounds=tally[label][0],
            wins=tally[label][1],
            draws=tally[label][2],
            losses=tally[label][3],
        )
        for label, r in current.items()
    ]
    return sorted(ratings, key=lambda r: (-r.ordinal, r.label))


def heatmap_png(
    order: Sequence[str],
    win: Mapping[str, Mapping[str, float | None]],
    title: str,
    share: Mapping[str, Mapping[str, float | None]] | None = None,
) -> bytes:
    """The win-rate matrix as a PNG (Agg canvas, no pyplot state): the row bot's win rate against the column
    bot, coloured, with the row bot's score share below each figure when `share` is given."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n = len(order)
    values = [[math.nan if win[r][c] is None else float(win[r][c] or 0.0) for c in order] for r in order]
    side = max(4.0, 1.0 + 0.75 * n)
    fig = Figure(figsize=(side + 1.4, side), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    image = ax.imshow(values, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    for i in range(n):
        for j in range(n):
            v = values[i][j]
            text = "-" if math.isnan(v) else f"{v:.0%}"
            cell = None if share is None else share[order[i]][order[j]]
            if cell is not None:
                text += f"\n{cell:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=9, color="black")
    ax.set_xticks(range(n), labels=list(order), rotation=45, ha="right")
    ax.set_yticks(range(n), labels=list(order))
    ax.set_xlabel("opponent (column)")
    ax.set_ylabel("bot (row)")
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="row bot's win rate")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
