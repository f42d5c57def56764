"""`sacbot report`: learning curves (PNG) and a Markdown summary of a campaign run folder (or of a bare
weights folder of `sacbot play` / `sacbot train-fast`).

- `data`: pure parsing of the run's JSONL files into typed rows (malformed lines are counted, not fatal), the
  active clock and the env-step axis.
- `series`: the curves (eval win rates and the composite against env steps and active wall time, training
  win rates overall and per opponent, losses, alpha, updates/s).
- `shares`: the per-round score share, its moving average and its 50-round blocks.
- `league_mix`: the league's opponent mix.
- `facts`: the final eval table's rows, their totals and the run facts.
- `summary`: the Markdown text (pure).
- `plots`: the thin matplotlib (Agg) shell that draws the series.
- `writer`: reads a run folder, calls the above, writes every file atomically.
"""

from sacbot.report.writer import ReportOutcome, write_report

__all__ = ["ReportOutcome", "write_report"]
