"""A tournament's out folder: its file names, `tournament.json` (`TournamentSpec`: which tournament the folder
holds) and `pairs.jsonl` (a `PairRecord` line per finished pair), read back to resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from sacbot.campaign.tournament_pair import PairRecord, TournamentModel, pairings
from sacbot.errors import UserError

SPEC_FILE = "tournament.json"
PAIRS_FILE = "pairs.jsonl"
HEATMAP_FILE = "heatmap.png"
RESULTS_FILE = "results.json"


class TournamentSpec(TournamentModel):
    """What makes two runs the same tournament: the bots (labels, sorted), rounds, game type and seed."""

    format: Literal["sacbot-tournament"] = "sacbot-tournament"
    version: Literal[1] = 1
    bots: tuple[str, ...]
    rounds: int
    game_type: str
    seed: int | None = None

    def describe(self) -> str:
        seed = "" if self.seed is None else f", seed {self.seed}"
        return f"bots {', '.join(self.bots)}; {self.rounds} rounds; {self.game_type}{seed}"


def _read_lines(path: Path) -> tuple[list[PairRecord], bool]:
    """Every valid record, and whether some line was torn or foreign (to be dropped by a rewrite)."""
    from sacbot import jsonl
    from sacbot.records import parse_rows

    lines = jsonl.read(path)
    records, refused = parse_rows(PairRecord.model_validate, lines.rows)
    return records, bool(lines.malformed or refused or not lines.complete)


def open_out_dir(out: Path, spec: TournamentSpec) -> dict[tuple[str, str], PairRecord]:
    """Claim `out` for `spec` (refusing another tournament's folder) and return its finished pairs."""
    from sacbot.checkpoint.atomic import atomic_write_json, atomic_write_text

    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is not a folder", 2)
    spec_path, pairs_path = out / SPEC_FILE, out / PAIRS_FILE
    refuse = (
        f"{out} holds another tournament ({{}}), not this one ({spec.describe()}): "
        "choose another --out or remove that folder"
    )
    if spec_path.exists():
        try:
            old = TournamentSpec.model_validate(json.loads(spec_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError):
            raise UserError(f"{spec_path} is not a sacbot tournament file; choose another --out", 2) from None
        if old != spec:
            raise UserError(refuse.format(old.describe()), 2)
    records, bad = _read_lines(pairs_path)
    wanted = set(pairings(spec.bots))
    for rec in records:
        if rec.key not in wanted or rec.rounds != spec.rounds or rec.game_type != spec.game_type:
            raise UserError(
                refuse.format(f"{PAIRS_FILE} has {rec.a} vs {rec.b}, {rec.rounds} rounds, {rec.game_type}"), 2
            )
    if bad:  # a line torn by a kill: keep the good lines, so the next append starts on a fresh line
        atomic_write_text(pairs_path, "".join(r.model_dump_json() + "\n" for r in records))
    if not spec_path.exists():
        atomic_write_json(spec_path, spec.model_dump(mode="json"))
    finished: dict[tuple[str, str], PairRecord] = {}
    for rec in records:
        finished.setdefault(rec.key, rec)
    return finished


def append_record(out: Path, record: PairRecord) -> None:
    from sacbot import jsonl

    jsonl.append(out / PAIRS_FILE, record.model_dump(mode="json"), allow_nan=False)
