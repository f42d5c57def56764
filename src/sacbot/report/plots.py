"""The matplotlib shell: series in, PNG bytes out (Agg canvas, no pyplot state, nothing shown)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from sacbot.report.data import Point

_SIZE = (8.0, 4.5)
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


def _mark_pretrain(ax: Any, pretrain_end: int | None) -> None:
    if pretrain_end is not None:
        ax.axvline(pretrain_end, color="grey", linestyle=":", linewidth=1, label="end of pretraining")


def win_rates(
    series: Mapping[str, Sequence[Point]],
    composite: Sequence[Point],
    composite_label: str,
    x: str,
    pretrain_end: int | None = None,
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
        _mark_pretrain(ax, pretrain_end)
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


def losses(series: Mapping[str, Sequence[tuple[int, float]]], pretrain_end: int | None = None) -> bytes:
    keys = [k for k, pts in series.items() if pts]
    fig, axes = _figure(rows=max(1, len(keys)), height=2.4 * max(1, len(keys)) + 0.6)
    colors = ("tab:blue", "tab:orange", "tab:green", "tab:red")
    for ax, key, color in zip(axes, keys, colors, strict=False):
        _curve(ax, series[key], key, color, pretrain_end)
        _mark_pretrain(ax, pretrain_end)
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
    pretrain_end: int | None = None,
) -> bytes:
    fig, (ax,) = _figure()
    _curve(ax, points, ylabel, "tab:purple", pretrain_end)
    _mark_pretrain(ax, pretrain_end)
    if log and all(p[1] > 0 for p in points):
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel("env steps")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _png(fig)
