"""The Markdown summary (`report.md`) of a run (pure: data in, text out)."""

from __future__ import annotations

from collections.abc import Sequence

from sacbot.campaign.scoring import EvalRecord
from sacbot.report.data import (
    ActiveClock,
    RunData,
    best_chunk,
    evals_at_chunk,
    latest_evals,
    run_facts,
    totals,
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


def render_summary(
    data: RunData, clock: ActiveClock, title: str, images: Sequence[tuple[str, str]], notes: Sequence[str]
) -> str:
    """`images`: (file name, caption) of the PNGs beside report.md; `notes`: plots left out, and why."""
    out = [f"# {title}", ""]
    final = latest_evals(data.evals)
    if final:
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
