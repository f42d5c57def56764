"""`sacbot report`: learning curves (PNG) and a Markdown summary of a campaign run folder.

- `data`: pure parsing of the run's JSONL files into typed rows (malformed lines are counted, not fatal) and
  the series the plots and the summary need (win rates against env steps and active wall time, losses,
  alpha, updates/s, the final eval table, run facts).
- `summary`: the Markdown text (pure).
- `plots`: the thin matplotlib (Agg) shell that draws the series.
- `writer`: reads a run folder, calls the above, writes every file atomically.
"""

from sacbot.report.writer import ReportOutcome, write_report

__all__ = ["ReportOutcome", "write_report"]
