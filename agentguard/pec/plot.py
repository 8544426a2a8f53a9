"""PEC curves as a picture: one line per group with its 95% bootstrap band (extra ``[plot]``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentguard.errors import MissingExtraError
from agentguard.pec.report import Report


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise MissingExtraError("plot", "matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_pec(report: Report, path: str | Path, *, max_depth: int | None = None) -> Path:
    """Write fixed-cohort PEC(k) against depth k for every group; returns the path."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=150)
    try:
        for g in report.groups:
            depths = [k for k in g.intervals.depths if max_depth is None or k <= max_depth]
            values = [g.summary.pec_at(k) for k in depths]
            bands = [g.pec_interval(k) for k in depths]
            label = f"{g.name()}  (TER {g.summary.ter:.2f}, AUC {g.summary.auc_pec:.2f})"
            (line,) = ax.plot(
                [0, *depths], [1.0, *values], marker="o", markersize=3.5, label=label, linewidth=1.8
            )
            lows = [1.0, *[b.low if b else v for b, v in zip(bands, values, strict=True)]]
            highs = [1.0, *[b.high if b else v for b, v in zip(bands, values, strict=True)]]
            ax.fill_between(
                [0, *depths], lows, highs, alpha=0.15, color=line.get_color(), linewidth=0
            )
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel("depth k (tool actions)")
        ax.set_ylabel("PEC(k) = share of episodes with FED > k")
        ax.set_ylim(0, 1.02)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        ax.set_title("Prefix executability curves (fixed cohort, 95% paired bootstrap band)")
        ax.legend(fontsize=8, loc="best", frameon=False)
        fig.tight_layout()
        out = Path(path)
        fig.savefig(out)
    finally:
        plt.close(fig)
    return out


__all__ = ["plot_pec"]
