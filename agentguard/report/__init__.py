"""agentguard.report: results over many traces, scored as a batch, and the HTML report.

``batch`` scores and aggregates records (shared by ``check`` and ``check --json``);
``timeline`` gives every constraint's verdict after each call; ``svg`` draws PEC
curves; ``html`` assembles the self-contained page; ``cli`` is ``agentguard report``.
"""

from __future__ import annotations

from agentguard.report.html import compliance_html, pec_html, write_html
from agentguard.report.timeline import Timeline, timeline

__all__ = ["Timeline", "compliance_html", "pec_html", "timeline", "write_html"]
