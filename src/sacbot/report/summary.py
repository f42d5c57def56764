"""The Markdown summary (`report.md`) of a run (pure: data in, text out)."""

from __future__ import annotations

from collections.abc import Sequence

from sacbot.campaign.scoring import EvalRecord
from sacbot.report.data import ActiveClock, RunData
from sacbot.report.facts import best_chunk, evals_at_chunk, latest_evals, run_facts, totals
from sacbot.report.shares import (
    SHARE_BLOCK,
    ShareRound,
    rounds_what,
    share_blocks,
    share_by_opponent,
    share_facts,
    share_rounds,
)


def eval_table(rows: Sequence[EvalRecord]) -> list[str]:
    """Per opponent: rounds, wins, win rate, score share (and the chunk evaluated); an `all` row under it."""
    lines = [
        "| Opponent | Rounds | Wins | Win rate | Score share | Chunk |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.opponent} | {r.rounds} | {r.wins} | {r.win_rate:.1%} | {r.score_share:.3f} | {r.chunk} |"
        )
    total = totals(rows)
    if total is not None and len(rows) > 1:
        lines.append(
            f"| **all** | {total.rounds} | {total.wins} | {total.win_rate:.1%} | {total.score_share:.3f} | |"
        )
    return lines


def share_section(rounds: Sequence[ShareRound], what: str, size: int = SHARE_BLOCK) -> list[str]:
    """The per-round score share: facts (first and last `size` rounds), then `size`-round blocks, then per
    opponent when there are several."""
    if not rounds:
        return []
    out = [
        f"## Score share per round ({what} rounds)",
        "",
        "Score share of a round: own / (own + enemy) score; a block's mean is over its rounds' shares, its "
        "pooled share is sum(own) / sum(own + enemy).",
        "",
        "| Fact | Value |",
        "|---|---|",
    ]
    out += [f"| {name} | {value} |" for name, value in share_facts(rounds, size)]
    out += [
        "",
        f"### Per {size}-round block",
        "",
        "| Rounds | Wins | Win rate | Mean score share | Pooled score share | Opponents |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for b in share_blocks(rounds, size):
        span = f"{b.first}-{b.last}" + (f" ({b.rounds} rounds)" if b.rounds < size else "")
        out.append(
            f"| {span} | {b.wins} | {b.wins / b.rounds:.1%} | {b.mean_share:.3f} | {b.pooled_share:.3f} "
            f"| {', '.join(b.opponents)} |"
        )
    per_opponent = share_by_opponent(rounds, size)
    if len(per_opponent) > 1:
        out += [
            "",
            f"### Per opponent: its first and its last {size} rounds",
            "",
            f"| Opponent | Rounds | Wins | Mean share, first {size} | Mean share, last {size} | Change |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, first, last in per_opponent:
            total = sum(1 for r in rounds if r.opponent == name)
            wins = sum(1 for r in rounds if r.opponent == name and r.won)
            later = total > size  # else its last rounds are its first
            change = f"{last.mean_share - first.mean_share:+.3f}" if later else ""
            last_text = f"{last.mean_share:.3f}" if later else ""
            out.append(f"| {name} | {total} | {wins} | {first.mean_share:.3f} | {last_text} | {change} |")
    return [*out, ""]


def render_summary(
    data: RunData,
    clock: ActiveClock,
    title: str,
    images: Sequence[tuple[str, str]],
    notes: Sequence[str],
    clip: tuple[str, str] | None = None,
) -> str:
    """`images`: (file name, caption) of the PNGs beside report.md; `notes`: plots left out, and why;
    `clip`: (file name, caption) of the latest recorded eval game's GIF beside report.md."""
    out = [f"# {title}", ""]
    final = latest_evals(data.evals)
    if data.kind != "campaign":
        folder = "sacbot train-fast" if data.kind == "train-fast" else "sacbot play"
        out += [f"A bare weights folder of `{folder}` (no campaign log, no evals).", ""]
    elif final:
        chunks = sorted({r.chunk for r in final})
        at = f"chunk {chunks[0]}" if len(chunks) == 1 else "each opponent's last eval"
        out += [f"## Final eval ({at})", "", *eval_table(final), ""]
        best = best_chunk(data)
        best_rows = evals_at_chunk(data.evals, best) if best is not None else []
        if best_rows and best not in chunks:
            out += [f"## Eval of the promoted best (chunk {best})", "", *eval_table(best_rows), ""]
    else:
        out += [
            "## Final eval",
            "",
            "No eval results in this run folder (eval_log.jsonl is missing or empty).",
            "",
        ]
    if clip is not None:
        out += [
            "## Latest recorded eval game",
            "",
            clip[1],
            "",
            f"![The latest recorded eval game]({clip[0]})",
            "",
        ]
    out += share_section(share_rounds(data.rounds), rounds_what(data))
    out += ["## Run facts", "", "| Fact | Value |", "|---|---|"]
    out += [f"| {name} | {value} |" for name, value in run_facts(data, clock)]
    out.append("")
    if data.malformed:
        skipped = ", ".join(f"{name}: {n}" for name, n in sorted(data.malformed.items()))
        out += [f"Malformed lines skipped: {skipped}.", ""]
    out += ["## Learning curves", ""]
    for name, caption in images:
        out += [f"### {caption}", "", f"![{caption}]({name})", ""]
    for note in notes:
        out.append(f"- {note}")
    if notes:
        out.append("")
    return "\n".join(out)
