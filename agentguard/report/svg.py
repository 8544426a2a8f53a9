"""PEC curves as inline SVG: the same picture as ``pec --plot`` without matplotlib.

One line per group, PEC(k) against depth k from k = 0 (PEC = 1), with the 95% paired
bootstrap band shaded; the legend names each group with its TER and AUC-PEC. Drawn as
plain SVG text so a report stays one self-contained file (no image, no network).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Final

from agentguard.pec.report import GroupReport, Report

PALETTE: Final = (
    "#2563eb",
    "#dc2626",
    "#059669",
    "#d97706",
    "#7c3aed",
    "#0891b2",
    "#db2777",
    "#4b5563",
)
"""Line colours, cycled; chosen to stay apart for the common forms of colour blindness."""

_W, _H = 720, 340
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 16, 16, 44


def _points(g: GroupReport, depths: Sequence[int]) -> list[tuple[int, float, float, float]]:
    """(k, PEC, band low, band high) from k = 0."""
    out = [(0, 1.0, 1.0, 1.0)]
    for k in depths:
        value = g.summary.pec_at(k)
        band = g.pec_interval(k)
        out.append((k, value, band.low if band else value, band.high if band else value))
    return out


def pec_svg(report: Report, *, max_depth: int | None = None) -> str:
    """The curves of every group of ``report`` as one ``<svg>`` element."""
    depths = sorted({k for g in report.groups for k in g.intervals.depths})
    if max_depth is not None:
        depths = [k for k in depths if k <= max_depth]
    last = max(depths, default=1)
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM

    def x(k: float) -> float:
        return _LEFT + plot_w * k / last

    def y(v: float) -> float:
        return _TOP + plot_h * (1.0 - v)

    parts = [
        f'<svg class="pec-curves" viewBox="0 0 {_W} {_H}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" aria-label="PEC curves">'
    ]
    for tick in range(0, 11, 2):
        v = tick / 10
        parts.append(
            f'<line class="grid" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
            f'<text class="tick" x="{_LEFT - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>'
        )
    step = max(1, round(last / 10))
    for k in range(0, last + 1, step):
        parts.append(
            f'<text class="tick" x="{x(k):.1f}" y="{_H - _BOTTOM + 18}" '
            f'text-anchor="middle">{k}</text>'
        )
    parts.append(
        f'<text class="axis" x="{_LEFT + plot_w / 2:.1f}" y="{_H - 6}" text-anchor="middle">'
        "depth k (tool actions)</text>"
        f'<text class="axis" transform="rotate(-90)" x="{-(_TOP + plot_h / 2):.1f}" y="14" '
        'text-anchor="middle">PEC(k): share with FED &gt; k</text>'
    )
    for index, g in enumerate(report.groups):
        colour = PALETTE[index % len(PALETTE)]
        pts = _points(g, [k for k in g.intervals.depths if k in depths])
        upper = " ".join(f"{x(k):.1f},{y(hi):.1f}" for k, _, _, hi in pts)
        lower = " ".join(f"{x(k):.1f},{y(lo):.1f}" for k, _, lo, _ in reversed(pts))
        line = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v, _, _ in pts)
        name = escape(g.name() or "all")
        parts.append(
            f'<g class="group" data-group="{name}">'
            f'<polygon class="band" points="{upper} {lower}" fill="{colour}"/>'
            f'<polyline class="curve" points="{line}" stroke="{colour}"/>'
        )
        for k, v, lo, hi in pts[1:]:
            parts.append(
                f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
                f"<title>{name}: PEC({k}) = {v:.3f} [{lo:.3f}, {hi:.3f}]</title></circle>"
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def legend(report: Report) -> str:
    """An HTML legend matching :func:`pec_svg`'s colours."""
    items = []
    for index, g in enumerate(report.groups):
        colour = PALETTE[index % len(PALETTE)]
        s = g.summary
        items.append(
            f'<li><span class="swatch" style="background:{colour}"></span>'
            f"<b>{escape(g.name() or 'all')}</b> "
            f'<span class="muted">n={s.n} · TER {s.ter:.2f} · AUC {s.auc_pec:.2f}</span></li>'
        )
    return f'<ul class="legend">{"".join(items)}</ul>'


__all__ = ["PALETTE", "legend", "pec_svg"]
