"""``agentguard report SPEC TRACES... --html OUT.html``: the HTML report of a batch.

Wired into the main CLI by :func:`add_parser` (see ``_PLUGINS`` in ``cli/main.py``).
Reads and scores the traces exactly as ``check`` does, and exits with ``check``'s
codes: 0 all compliant (or the mean is at least ``--fail-under``), 1 a violation, 2 an
invalid spec or misuse, 3 unreadable records (still listed in the report).

The PEC curves of such a report come from the tool errors the traces recorded (the
first errored call is the first non-executable action); without any recorded error
the report says so instead of drawing a flat curve. ``agentguard pec ... --html``
draws them from replayed or recorded executability verdicts.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Console

from agentguard.pec.episode import Scored, episode_from_trace
from agentguard.pec.report import Report as PecReport
from agentguard.pec.report import build_report
from agentguard.report import batch
from agentguard.report.html import compliance_html, write_html
from agentguard.trace.formats import format_names

PEC_RESAMPLES = 1000
"""Bootstrap resamples for the report's PEC bands (``pec`` itself defaults to 10000)."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``report`` on the main parser's sub-commands."""
    from agentguard.cli.check import add_load_option, add_scale_options

    parser = subparsers.add_parser(
        "report",
        help="write a self-contained HTML report of traces scored against a spec",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("spec", help="the .ltl spec")
    parser.add_argument("traces", nargs="+", help="trace files (any format check reads)")
    parser.add_argument("--html", required=True, metavar="OUT", help="write the report here")
    parser.add_argument("--title", default=None, help="the page title")
    parser.add_argument("--format", choices=format_names(), default=None)
    parser.add_argument("--no-final-answer", dest="final_answer", action="store_false")
    add_scale_options(parser)
    add_load_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentguard.cli import check
    from agentguard.cli import main as cli

    spec = cli._load(args.spec, args.load)
    if spec is None:
        return cli.EXIT_USAGE
    missing = cli._unregistered(spec)
    if missing:
        cli._err(f"{args.spec}: declared but not registered: {', '.join(missing)}")
        return cli.EXIT_USAGE
    items = check.score_batch(args, spec, Console(stderr=True, soft_wrap=True))
    for item in items:
        if item.error is not None:
            cli._err(item.error)
        elif item.unjudged:
            cli._err(batch.unjudged_message(item))
    pec, note = pec_from_recorded_errors(items, args.by)
    page = compliance_html(items, spec, by=args.by, title=args.title, pec=pec, pec_note=note)
    out = write_html(page, args.html)
    print(f"report written to {out}")
    if any(i.error is not None for i in items):
        return cli.EXIT_INPUT
    failed = check.batch_failed(items, args.fail_under)
    return cli.EXIT_VIOLATION if failed else cli.EXIT_OK


def pec_from_recorded_errors(
    items: Sequence[batch.CheckedTrace], by: Sequence[str]
) -> tuple[PecReport | None, str]:
    """PEC over the traces' recorded tool errors (FED = first errored call + 1), grouped
    like the compliance table; None and a note when no trace recorded any error."""
    scored: list[Scored] = []
    recorded = False
    for item in items:
        loaded = item.loaded
        if loaded is None or loaded.trace is None or item.report is None:
            continue
        labels = {n: batch.group_name(batch.field_value(item, n)) for n in by} or {
            "group": "all traces"
        }
        episode = episode_from_trace(
            loaded.trace, task_id=item.label, success=item.report.passed, labels=labels
        )
        errored = [i for i, c in enumerate(episode.calls) if c.error]
        recorded = recorded or bool(errored)
        fed = errored[0] + 1 if errored else episode.horizon + 1
        scored.append(Scored(episode, fed))
    if not scored or not recorded:
        return None, (
            "No trace recorded a tool error, so there is no executability to draw; "
            "`agentguard pec EPISODES --html OUT` replays runs against an oracle."
        )
    report = build_report(scored, tuple(by) or ("group",), resamples=PEC_RESAMPLES)
    return report, (
        "From the tool errors recorded in the traces: the first errored call is the "
        "first non-executable action (no oracle replay); success = fully compliant."
    )


__all__ = ["PEC_RESAMPLES", "add_parser", "pec_from_recorded_errors", "run"]
