"""`sacbot eval`: eval games of a frozen checkpoint against named opponents: deterministic (tanh of the
policy's mean), or acting as another `ActionMode` says (every action drawn from the policy, as training play
draws them, or only the target speed drawn).

The bot plays in eval mode (`SACBOT_EVAL_MODE=1`) from a private copy of the checkpoint in a temporary run
folder, so the file named on the command line is only ever read.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sacbot.agent.inference import ActionMode
from sacbot.campaign.config import parse_campaign
from sacbot.campaign.loop import ChunkFailed, GameScore, RemoteEval
from sacbot.errors import UserError
from sacbot.rundir import RunPaths

if TYPE_CHECKING:
    from sacbot.campaign.arena_lifecycle import GameSelection


def evaluate(
    checkpoint: Path,
    opponents: list[str],
    rounds: int,
    game_type: str = "1v1",
    bots_dirs: list[Path] | None = None,
    report: Callable[[dict[str, Any]], None] = lambda event: None,
    retries: int = 1,
    recorder: GameSelection | None = None,
    remote: RemoteEval | None = None,
    actions: ActionMode = "mean",
) -> list[tuple[str, GameScore]]:
    """`recorder` records the eval games (kind "eval"; `sacbot eval --record DIR`)."""
    from sacbot.campaign.runner import ArenaBackend
    from sacbot.checkpoint import atomic_write_bytes, load_checkpoint

    if not opponents:
        raise UserError("--opponents: name at least one opponent", exit_code=2)
    if rounds < 1:
        raise UserError("--rounds: must be >= 1", exit_code=2)
    load_checkpoint(checkpoint)  # a corrupt or missing archive is one clear line before any process starts
    data = {
        "name": "eval",
        "chunks": {"rounds": rounds, "budget": 1},
        "opponents": {opponents[0]: 1},
        "game": {"type": game_type},
    }
    if bots_dirs is not None:
        data["bots_dirs"] = [str(d) for d in bots_dirs]
    if actions != "mean":
        data["bot"] = {"eval_actions": actions}
    campaign = parse_campaign(data, "eval")
    if remote is not None:  # the games elsewhere, e.g. one Ray task each (`sacbot eval --ray`)
        if recorder is not None:
            raise UserError("--record records games on this machine: without --ray", exit_code=2)
        return remote(checkpoint.read_bytes(), data, opponents, rounds, retries)
    with tempfile.TemporaryDirectory(prefix="sacbot-eval-") as tmp:
        paths = RunPaths(Path(tmp))
        copy = paths.eval_dir / "checkpoint.zip"
        atomic_write_bytes(copy, checkpoint.read_bytes())
        backend = ArenaBackend(campaign, paths, recorder)
        out: list[tuple[str, GameScore]] = []
        try:
            for name in opponents:
                for attempt in range(retries + 1):
                    try:
                        score = backend.run_eval(copy, name, rounds, report)
                        break
                    except ChunkFailed as exc:
                        report(
                            {
                                "event": "eval_failed",
                                "opponent": name,
                                "attempt": attempt + 1,
                                "reason": str(exc),
                            }
                        )
                        if attempt == retries:
                            raise UserError(f"eval against {name} failed: {exc}", exit_code=1) from None
                        time.sleep(1.0)
                out.append((name, score))
        finally:
            backend.close()
    return out
