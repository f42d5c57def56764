"""`sacbot report`: learning curves (PNG) and a Markdown summary of a campaign run folder (or of a bare
weights folder of `sacbot play` / `sacbot train-fast`).

- `data`: pure parsing of the run's JSONL files into typed rows (malformed lines are counted, not fatal) and
  the series the plots and the summary need (win rates against env steps and active wall time, overall and
  per opponent, the per-round score share and its 50-round blocks, the league's opponent mix, losses,
  alpha, updates/s, the final eval table, run facts).
- `summary`: the Markdown text (pure).
- `plots`: the thin matplotlib (Agg) shell that draws the series.
- `writer`: reads a run folder, calls the above, writes every file atomically.
"""

from sacbot.report.writer import ReportOutcome, write_report

__all__ = ["ReportOutcome", "write_report"]
