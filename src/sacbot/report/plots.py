"""The matplotlib shell: series in, PNG bytes out (Agg canvas, no pyplot state, nothing shown)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from sacbot.report.data import Phases
from sacbot.report.league_mix import LeagueMix
from sacbot.report.series import Point
from sacbot.report.shares import ShareRound

_SIZE = (8.0, 4.5)
# One colour per loss panel, in order (the critic's, the actor's, alpha's, then each opt-in term's).
LOSS_COLORS = (
    "tab:blue",
    "tab:orange",
    "tab:green",
    "tab:red",
    "tab:brown",
    "tab:purple",
    "tab:cyan",
    "tab:olive",
)
_DPI = 100


def _figure(rows: int = 1, height: float | None = None) -> tuple[Any, list[Any]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    inches = height or _SIZE[1]
    fig = Figure(figsize=(_SIZE[0], inches), dpi=_DPI)
    FigureCanvasAgg(fig)
    # Fixed margins (in inches, turned into fractions): a layout engine would draw every figure twice.
    fig.subplots_adjust(
        left=0.1, right=0.98, top=1 - 0.4 / inches, bottom=0.55 / inches, hspace=0.45 if rows > 1 else 0.2
    )
    axes = [fig.add_subplot(rows, 1, i + 1) for i in range(rows)]
    return fig, axes


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _time_unit(max_s: float) -> tuple[float, str]:
    if max_s < 2 * 60:
        return 1.0, "s"
    if max_s < 3 * 3600:
        return 60.0, "min"
    return 3600.0, "h"


def _mark_pretrain(ax: Any, phases: Phases | None) -> None:
    """The end of pretraining (in the legend) and, named at the top, where each of its stages began."""
    if phases is None:
        return
    for name, steps in phases.stages:
        ax.axvline(steps, color="grey", linestyle="-.", linewidth=0.8)
        ax.text(steps, 0.5, f"stage {name}", transform=ax.get_xaxis_transform(), rotation=90, fontsize=7,
                color="dimgrey", va="center", ha="right",
                bbox={"facecolor": "white", "alpha": 0.7, "edgecolor": "none", "pad": 1})  # fmt: skip
    ax.axvline(phases.end, color="grey", linestyle=":", linewidth=1, label="end of pretraining")


def win_rates(
    series: Mapping[str, Sequence[Point]],
    composite: Sequence[Point],
    composite_label: str,
    x: str,
    phases: Phases | None = None,
) -> bytes:
    """Eval win rate per opponent and the composite; `x` is "env_steps" or "active_s"."""
    fig, (ax,) = _figure()
    everything = [p for pts in series.values() for p in pts] + list(composite)
    scale, unit = _time_unit(max((p.active_s for p in everything), default=0.0))

    def xs(points: Sequence[Point]) -> list[float]:
        if x == "env_steps":
            return [float(p.env_steps or 0) for p in points]
        return [p.active_s / scale for p in points]

    for name, points in series.items():
        ax.plot(xs(points), [p.value for p in points], marker="o", markersize=3, linewidth=1.2, label=name)
    if composite:
        ax.plot(
            xs(composite), [p.value for p in composite], color="black", linestyle="--", linewidth=2.2,
            marker="s", markersize=4, label=composite_label,
        )  # fmt: skip
    if x == "env_steps":
        _mark_pretrain(ax, phases)
        ax.set_xlabel("env steps")
        ax.set_title("Eval win rate per opponent, and the composite, against env steps")
    else:
        ax.set_xlabel(f"active wall time ({unit})")
        ax.set_title("Eval win rate per opponent, and the composite, against wall time")
    ax.set_ylabel("win rate / composite")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best", ncol=2)
    return _png(fig)


def _smoothed(values: Sequence[float], window: int) -> list[float]:
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


def _curve(
    ax: Any, points: Sequence[tuple[int, float]], label: str, color: str, split_at: int | None
) -> None:
    """Raw values, with a moving average on top when noisy; pretraining and real-time play are drawn (and
    smoothed) as separate pieces, so one phase's average never leaks into the other's."""
    pieces = [list(points)]
    if split_at is not None:
        pieces = [[p for p in points if p[0] <= split_at], [p for p in points if p[0] > split_at]]
    noisy = len(points) > 30
    labelled = False
    for piece in (p for p in pieces if p):
        xs = [float(p[0]) for p in piece]
        ys = [p[1] for p in piece]
        name = None if labelled else (f"{label} (smoothed)" if noisy else label)
        labelled = True
        if noisy:  # per-pass values are noisy: the raw line faint, a moving average on top
            ax.plot(xs, ys, color=color, alpha=0.25, linewidth=0.8)
            ax.plot(xs, _smoothed(ys, max(5, len(points) // 40)), color=color, linewidth=1.5, label=name)
        else:
            ax.plot(xs, ys, color=color, marker="o", markersize=3, linewidth=1.2, label=name)


def losses(series: Mapping[str, Sequence[tuple[int, float]]], phases: Phases | None = None) -> bytes:
    keys = [k for k, pts in series.items() if pts]
    fig, axes = _figure(rows=max(1, len(keys)), height=2.4 * max(1, len(keys)) + 0.6)
    for i, (ax, key) in enumerate(zip(axes, keys, strict=True)):
        color = LOSS_COLORS[i % len(LOSS_COLORS)]
        _curve(ax, series[key], key, color, None if phases is None else phases.end)
        _mark_pretrain(ax, phases)
        ax.set_ylabel(key.replace("_", " "))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    axes[0].set_title("SAC losses (mean over each train pass) against env steps")
    axes[-1].set_xlabel("env steps")
    return _png(fig)


def single(
    points: Sequence[tuple[int, float]],
    title: str,
    ylabel: str,
    log: bool = False,
    phases: Phases | None = None,
) -> bytes:
    fig, (ax,) = _figure()
    _curve(ax, points, ylabel, "tab:purple", None if phases is None else phases.end)
    _mark_pretrain(ax, phases)
    if log and all(p[1] > 0 for p in points):
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel("env steps")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _png(fig)


def _colors(names: Sequence[str]) -> dict[str, Any]:
    """One colour per name (tab10, or tab20 beyond ten names), given in name order, the learner's own
    snapshots last, so a plot with the same opponents gives each the same colour."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(names) <= 10 else "tab20"]
    ordered = sorted(set(names), key=lambda n: (n.endswith("(own snapshots)"), n.lower()))
    return {name: cmap(i % cmap.N) for i, name in enumerate(ordered)}


def training_win_rates(
    series: Mapping[str, Sequence[Point]], window: int, min_rounds: int, phases: Phases | None = None
) -> bytes:
    """Training win rate per opponent (its last `window` rounds) against env steps."""
    fig, (ax,) = _figure()
    colors = _colors(list(series))
    for name, points in series.items():
        ax.plot(
            [float(p.env_steps or 0) for p in points], [p.value for p in points], color=colors[name],
            linewidth=1.2, label=f"{name} ({len(points) + min_rounds - 1} rounds)",
        )  # fmt: skip
    _mark_pretrain(ax, phases)
    ax.set_title(
        f"Training win rate per opponent: its last {window} rounds (from its {min_rounds}th round on),"
        " stochastic policy",
        fontsize=10,
    )
    ax.set_xlabel("env steps")
    ax.set_ylabel(f"win rate (last {window} rounds)")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best", ncol=2)
    return _png(fig)


def score_share_per_round(
    rounds: Sequence[ShareRound], average: Sequence[float], window: int, what: str = "real-time"
) -> bytes:
    """Each round's own / (own + enemy) score, coloured by opponent, and the moving average over them all."""
    fig, (ax,) = _figure()
    names = list(dict.fromkeys(r.opponent for r in rounds))
    colors = _colors(names)
    for name in names:
        mine = [r for r in rounds if r.opponent == name]
        ax.scatter(
            [r.index for r in mine], [r.share for r in mine], s=9, color=colors[name], alpha=0.6,
            label=f"{name} ({len(mine)} rounds)",
        )  # fmt: skip
    ax.plot(
        [r.index for r in rounds], list(average), color="black", linewidth=2.0,
        label=f"moving average, last {window} rounds" + (" (all opponents)" if len(names) > 1 else ""),
    )  # fmt: skip
    ax.axhline(0.5, color="grey", linestyle=":", linewidth=1)
    from matplotlib.ticker import MaxNLocator

    ax.set_title(f"Score share per {what} round, in the order played")
    ax.set_xlabel("round (in the order played)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("score share: own / (own + enemy)")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best", ncol=2 if len(names) > 4 else 1)
    return _png(fig)


def _stack(ax: Any, mix: LeagueMix, colors: Mapping[str, Any], bars: bool) -> None:
    import numpy as np

    names = list(mix.shares)
    values = np.array([mix.shares[n] for n in names], dtype=float)
    xs = np.array(mix.xs, dtype=float)
    if bars or len(xs) < 2:
        width = 0.8 if bars else max(1.0, 0.05 * float(xs.max(initial=1.0)))
        bottom = np.zeros(len(xs))
        for name, row in zip(names, values, strict=True):
            ax.bar(xs, row, width=width, bottom=bottom, color=colors[name], label=name, linewidth=0)
            bottom += row
    else:  # PFSP's probabilities move with every round: straight lines between the saves' figures
        ax.stackplot(xs, values, colors=[colors[n] for n in names], labels=names, alpha=0.85)
    cumulative = np.cumsum(values, axis=0)
    index = {x: i for i, x in enumerate(mix.xs)}
    marks_x, marks_y = [], []
    for x, name in mix.drawn:
        if name in names and x in index:
            row, col = names.index(name), index[x]
            marks_x.append(x)
            marks_y.append(cumulative[row, col] - values[row, col] / 2)
    if marks_x:
        ax.scatter(
            marks_x, marks_y, marker="v", s=30, color="black", zorder=3, label="opponent drawn (its band)"
        )
    # A campaign snapshot follows its chunk (it joins the next chunk's pool); train-fast's: at its env steps.
    shift, label = (0.5, "snapshot taken (after that chunk)") if bars else (0.0, "snapshot taken")
    for i, x in enumerate(mix.snapshots):
        ax.axvline(x + shift, color="black", linestyle=":", linewidth=0.8, label=label if i == 0 else None)
    if bars:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0, 1.0)
    ax.set_ylabel("draw probability")
    ax.set_xlabel(mix.x_label)
    ax.grid(alpha=0.3, axis="y")


def league_mix(campaign: LeagueMix | None, fast: LeagueMix | None) -> bytes:
    """The pool's draw probabilities per opponent: the campaign's per chunk (with the opponent each chunk
    drew), and the fast phase's at each save against env steps; one panel each that the run has."""
    panels = [(m, title) for m, title in (
        (fast, "League opponent mix, fast phase (train-fast): pool probabilities at each save"),
        (campaign, "League opponent mix, real-time chunks: draw probabilities per chunk"),
    ) if m is not None]  # fmt: skip
    if not panels:
        raise ValueError("no league data to draw")
    fig, axes = _figure(rows=len(panels), height=3.6 * len(panels) + 0.6)
    names = list(dict.fromkeys(n for m, _ in panels for n in m.shares))
    colors = _colors(names)
    for ax, (mix, title) in zip(axes, panels, strict=True):
        _stack(ax, mix, colors, bars=mix is campaign)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.subplots_adjust(right=0.74)
    return _png(fig)
