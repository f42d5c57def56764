"""The I/O shell of `sacbot report`: read a run folder, draw, write the PNGs and report.md atomically."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sacbot.errors import UserError
from sacbot.jsonl import read_text
from sacbot.records import read_best_score, read_round_counter
from sacbot.report.data import (
    CAMPAIGN_LOG,
    EVAL_LOG,
    JSONL_FILES,
    OPT_IN_LOSS_TERMS,
    PLAY_METRICS,
    PLAY_ROUNDS,
    WEIGHTS_FOLDER_FILES,
    ActiveClock,
    BestInfo,
    RunData,
    active_clock,
    parse_run,
    run_phases,
    weights_folder_texts,
)
from sacbot.report.league_mix import campaign_league_mix, fast_league_mix
from sacbot.report.series import (
    MIN_OPPONENT_ROUNDS,
    TRAINING_WINDOW,
    alpha_series,
    composite_series,
    loss_series,
    session_boundaries,
    training_win_rate_by_opponent,
    training_win_rate_series,
    updates_per_s_series,
    win_rate_series,
)
from sacbot.report.shares import SHARE_WINDOW, moving_average, rounds_what, share_rounds
from sacbot.report.summary import render_summary
from sacbot.rundir import REPORT_DIR, ROUNDS, STAGE_PREFIX, TRAINING_METRICS, RunPaths, WeightsPaths

REPORT_MD = "report.md"
CLIP_GIF = "latest_eval.gif"
# The clip of the latest recorded eval game: the first turns of its first round, small and short (48 frames
# at 12 frames a second, 10 turns apart: 4 s, turns 1 to ~470).
CLIP_WIDTH = 400  # narrower, the indicator and the score panel overlap
CLIP_FPS = 12.0
CLIP_SPEED = 4.0
CLIP_FRAMES = 48


@dataclass(frozen=True)
class ReportOutcome:
    out: Path
    files: list[Path]
    malformed: dict[str, int]
    notes: list[str] = field(default_factory=list)


def _best_info(run_dir: Path) -> BestInfo:
    paths = RunPaths(run_dir)
    mirror = read_best_score(paths)
    info = BestInfo() if mirror is None else BestInfo(mirror.score, mirror.kind, mirror.chunk)
    best_zip = paths.best
    if not best_zip.is_file():
        return info
    from sacbot.checkpoint import read_meta

    try:
        meta = read_meta(best_zip)
    except (UserError, OSError, ValueError):
        return info  # a damaged best.zip is the checkpoint tools' to report; the curves do not need it
    if meta is None:
        return info
    return BestInfo(
        score=info.score if info.score is not None else meta.score,
        kind=info.kind or meta.score_kind,
        chunk=info.chunk,
        env_steps=meta.env_steps,
    )


def _stage_folders(run_dir: Path, file: str) -> list[Path]:
    """The run's `[[pretrain.stages]]` folders that hold `file`, in the order they ran (the report reads a
    folder without its campaign file, so by when each last wrote it)."""
    stages = [d for d in run_dir.glob(f"{STAGE_PREFIX}*") if (d / file).is_file()]
    return sorted(stages, key=lambda d: (d / file).stat().st_mtime)


def _stage_starts(run_dir: Path) -> list[tuple[str, int]]:
    """(stage name, env steps) where each stage began: where the phase before it left its `latest.zip` (a
    stage whose phase before left none readable is not marked)."""
    from sacbot.checkpoint import read_meta

    latest = RunPaths(run_dir).pretrain.latest.name
    starts, before = [], RunPaths(run_dir).pretrain.folder
    for folder in _stage_folders(run_dir, latest):
        try:
            meta = read_meta(before / latest) if (before / latest).is_file() else None
        except (UserError, OSError, ValueError):
            meta = None  # a damaged archive is the checkpoint tools' to report; the curves do without it
        if meta is not None:
            starts.append((folder.name.removeprefix(STAGE_PREFIX), meta.env_steps))
        before = folder
    return starts


def _phase_text(run_dir: Path, name: str) -> str | None:
    """A run folder file's text; a pretraining file (`pretrain/...`) is followed by the same file of each
    `[[pretrain.stages]]` fine-tune (`stage-<name>/...`), in the order they ran, so the pretraining's curves
    and league mix go on through its stages."""
    text = read_text(run_dir / name)
    pretrain = RunPaths(run_dir).pretrain.folder.name + "/"
    if not name.startswith(pretrain):
        return text
    file = name.removeprefix(pretrain)
    parts = [text] + [read_text(d / file) for d in _stage_folders(run_dir, file)]
    held = [part if part.endswith("\n") else part + "\n" for part in parts if part]
    return "".join(held) if held else text


def load_run(run_dir: Path) -> RunData:
    """The run folder's data; a missing folder, or one without any usable line, is a UserError.

    A folder without any of a campaign run's files but with `rounds.jsonl` or `training_metrics.jsonl` is a
    bare weights folder (`sacbot play`'s SACBOT_WEIGHTS_DIR, or a `sacbot train-fast --out` folder)."""
    if not run_dir.exists():
        raise UserError(f"run folder {run_dir} does not exist", exit_code=2)
    if not run_dir.is_dir():
        raise UserError(f"{run_dir} is not a folder (give a campaign run folder, e.g. runs/standard)", 2)
    texts = {name: _phase_text(run_dir, name) for name in JSONL_FILES}
    weights_folder = all(text is None for text in texts.values())
    if weights_folder:
        bare = {name: read_text(run_dir / name) for name in WEIGHTS_FOLDER_FILES}
        if bare[ROUNDS] is None and bare[TRAINING_METRICS] is None:
            raise UserError(
                f"{run_dir} is neither a campaign run folder (none of {CAMPAIGN_LOG}, {EVAL_LOG}, "
                f"{PLAY_METRICS} is there) nor a weights folder (no {ROUNDS}, {TRAINING_METRICS})",
                exit_code=2,
            )
        texts = weights_folder_texts(bare)
    best = BestInfo() if weights_folder else _best_info(run_dir)
    data = parse_run(texts, best, weights_folder=weights_folder)
    counter = (WeightsPaths(run_dir) if weights_folder else RunPaths(run_dir).weights).round_counter
    data.round_counter = read_round_counter(counter)
    if not weights_folder:
        data.stage_starts = _stage_starts(run_dir)
    if not data.usable:
        bad = sum(data.malformed.values())
        why = f"{bad} malformed line(s), nothing else" if bad else "the files are empty"
        raise UserError(f"{run_dir}: no usable data in the run folder ({why})", exit_code=2)
    return data


def _plots(data: RunData, clock: ActiveClock) -> tuple[list[tuple[str, str, Callable[[], bytes]]], list[str]]:
    """(file name, caption, draw) for every curve the data supports, and a note for each left out."""
    from sacbot.report import plots

    todo: list[tuple[str, str, Callable[[], bytes]]] = []
    notes: list[str] = []
    rates = win_rate_series(data, clock)
    comp, comp_label = composite_series(data, clock)
    pre = run_phases(data)
    if rates:
        if data.metrics:
            todo.append(
                (
                    "win_rate_vs_env_steps.png",
                    "Eval win rate and composite against env steps",
                    lambda: plots.win_rates(rates, comp, comp_label, "env_steps", pre),
                )
            )
        else:
            notes.append("No win-rate curve against env steps: no training metrics to place the evals.")
        todo.append(
            (
                "win_rate_vs_wall_time.png",
                "Eval win rate and composite against wall time",
                lambda: plots.win_rates(rates, comp, comp_label, "active_s"),
            )
        )
    elif data.kind == "campaign":
        notes.append("No win-rate curves: no eval results.")
    training = training_win_rate_series(data, clock)
    if training and data.metrics:
        todo.append(
            (
                "training_win_rate.png",
                f"Training win rate (last {TRAINING_WINDOW} rounds, pretraining and real-time)",
                lambda: plots.single(
                    [(p.env_steps or 0, p.value) for p in training],
                    f"Training win rate: last {TRAINING_WINDOW} rounds, stochastic policy, all opponents",
                    "win rate",
                    False,
                    pre,
                ),
            )
        )
    else:
        notes.append(f"No training win-rate curve: fewer than {TRAINING_WINDOW} training rounds logged.")
    per_opponent = training_win_rate_by_opponent(data, clock)
    if per_opponent and data.metrics:
        todo.append(
            (
                "training_win_rate_per_opponent.png",
                f"Training win rate per opponent (its last {TRAINING_WINDOW} rounds) against env steps",
                lambda: plots.training_win_rates(per_opponent, TRAINING_WINDOW, MIN_OPPONENT_ROUNDS, pre),
            )
        )
    else:
        notes.append(
            "No per-opponent training win-rate curve: "
            + (
                f"no opponent has {MIN_OPPONENT_ROUNDS} training rounds logged."
                if data.metrics
                else "no training metrics to place the rounds."
            )
        )
    scored = share_rounds(data.rounds)
    what = rounds_what(data)
    if scored:
        average = moving_average([r.share for r in scored], SHARE_WINDOW)
        todo.append(
            (
                "score_share_per_round.png",
                f"Score share per {what} round, with its moving average over {SHARE_WINDOW} rounds",
                lambda: plots.score_share_per_round(scored, average, SHARE_WINDOW, what),
            )
        )
    else:
        notes.append(f"No per-round score share: no scored rounds in {_rounds_file(data)}.")
    campaign_mix = campaign_league_mix(data.events)
    fast_mix = fast_league_mix(data.fast_league)
    if campaign_mix is not None or fast_mix is not None:  # no league: no plot, and nothing to say
        todo.append(
            (
                "league_mix.png",
                "The league's opponent mix over time (draw probabilities per opponent)",
                lambda: plots.league_mix(campaign_mix, fast_mix),
            )
        )
    loss = loss_series(data.metrics)
    if any(loss.values()):
        terms = " and ".join(name for key, name in OPT_IN_LOSS_TERMS.items() if loss[key])
        caption = "Critic, actor and alpha losses" + (f", with {terms}" if terms else "")
        todo.append(("losses.png", caption, lambda: plots.losses(loss, pre)))
    else:
        notes.append("No loss curves: no training metrics with losses (no update has run).")
    alpha = alpha_series(data.metrics)
    if alpha:
        todo.append(
            (
                "alpha.png",
                "Entropy temperature alpha",
                lambda: plots.single(alpha, "Alpha", "alpha", True, pre),
            )
        )
    else:
        notes.append("No alpha curve: no training metrics with alpha.")
    ups = updates_per_s_series(data.metrics, session_boundaries(data.events))
    if ups:
        todo.append(
            (
                "updates_per_s.png",
                "SAC updates per second",
                lambda: plots.single(
                    ups, "SAC updates per second (between train passes)", "updates/s", False, pre
                ),
            )
        )
    else:
        notes.append("No updates/s curve: fewer than two metrics lines of one process with update counts.")
    return todo, notes


def _rounds_file(data: RunData) -> str:
    return PLAY_ROUNDS if data.kind == "campaign" else ROUNDS


def _clip(run_dir: Path, target: Path, notes: list[str]) -> tuple[str, str] | None:
    """A GIF of the first turns of the latest eval game the campaign recorded (`[record]`), into `target`."""
    from sacbot.viewer.reader import read_recording
    from sacbot.viewer.recording import recordings_in
    from sacbot.viewer.render import render_clip

    found = recordings_in(RunPaths(run_dir).recordings, "-eval-")
    if not found:
        return None
    latest = found[-1]
    try:
        recording = read_recording(latest)
        info = render_clip(
            recording,
            target / CLIP_GIF,
            speed=CLIP_SPEED,
            fps=CLIP_FPS,
            width=CLIP_WIDTH,
            round_number=_first_round(recording.messages()),
            max_frames=CLIP_FRAMES,
        )
    except UserError as exc:
        notes.append(f"No clip of the latest eval game: {exc}")
        return None
    (r0, t0), (_, t1) = info.first_turn, info.last_turn
    caption = f"Round {r0}, turns {t0}-{t1} of `{latest}` (`sacbot replay {latest}` plays all of it)."
    return CLIP_GIF, caption


def _first_round(messages: list[dict[str, object]]) -> int:
    for m in messages:
        number = m.get("roundNumber")
        if m.get("type") == "TickEventForObserver" and isinstance(number, int):
            return number
    return 1  # read_recording refuses a recording without turns


def write_report(run_dir: Path, out: Path | None = None) -> ReportOutcome:
    data = load_run(run_dir)
    from sacbot.checkpoint import atomic_write_bytes, atomic_write_text

    target = out if out is not None else run_dir / REPORT_DIR
    if target.exists() and not target.is_dir():
        raise UserError(f"--out {target} exists and is not a folder", exit_code=2)
    clock = active_clock(data)
    todo, notes = _plots(data, clock)
    files: list[Path] = []
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, _, draw in todo:
            atomic_write_bytes(target / name, draw())
            files.append(target / name)
        clip = _clip(run_dir, target, notes) if data.kind == "campaign" else None
        if clip is not None:
            files.append(target / CLIP_GIF)
        if data.kind == "campaign":
            title = f"Run report: {run_dir.resolve().name}"
        else:
            title = f"Weights folder report: {run_dir.resolve().name} (sacbot {data.kind})"
        text = render_summary(data, clock, title, [(n, c) for n, c, _ in todo], notes, clip)
        atomic_write_text(target / REPORT_MD, text)
        files.append(target / REPORT_MD)
    except OSError as exc:
        raise UserError(
            f"cannot write the report into {target}: {exc.strerror or exc}", exit_code=1
        ) from None
    return ReportOutcome(target, files, dict(data.malformed), notes)
