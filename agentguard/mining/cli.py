"""``agentguard mine TRACES... [-o spec.ltl]``: propose a spec from recorded runs.

Wired into the main CLI by :func:`add_parser` (``_PLUGINS`` in ``cli/main.py``). Exit
codes: 0 a spec was proposed; 2 the command is misused (a threshold out of range, an
output that cannot be written); 3 a trace record could not be read (nothing is proposed
from a partial log).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_USAGE, EXIT_INPUT = 0, 2, 3


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share in (0, 1], got {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share in (0, 1], got {text}")
    return value


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``mine`` on the main parser's sub-commands."""
    from agentguard.trace.formats import format_names

    parser = subparsers.add_parser(
        "mine",
        help="propose a least-privilege spec from recorded runs (docs/mining.md)",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("traces", nargs="+", help="recorded runs (any format check reads)")
    parser.add_argument("-o", "--output", help="write the spec here (default: stdout)")
    parser.add_argument(
        "--min-support",
        type=_share,
        default=1.0,
        metavar="SHARE",
        help="keep constraints that hold on at least this share of the runs (default 1.0)",
    )
    parser.add_argument(
        "--negative",
        nargs="+",
        default=[],
        metavar="TRACES",
        help="runs known to be bad: keep only the constraints that reject one of them",
    )
    parser.add_argument("--name", default="mined", help="the spec's name (default: mined)")
    parser.add_argument(
        "--cases",
        metavar="FILE",
        help="also write policy test cases replaying the runs (for `agentguard test`)",
    )
    parser.add_argument(
        "--no-dataflow",
        dest="dataflow",
        action="store_false",
        help="leave out data flows between calls and from user messages",
    )
    parser.add_argument(
        "--no-values",
        dest="values",
        action="store_false",
        help="leave out enumerations and ranges of argument values",
    )
    parser.add_argument("--format", choices=format_names(), default=None)
    parser.add_argument("--no-final-answer", dest="final_answer", action="store_false")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentguard.mining.errors import MiningError
    from agentguard.mining.miner import mine
    from agentguard.terminal import printable

    try:
        mined = mine(
            args.traces,
            min_support=args.min_support,
            negative=args.negative,
            name=args.name,
            dataflow=args.dataflow,
            values=args.values,
            format=args.format,
            final_answer=args.final_answer,
        )
    except MiningError as exc:
        print(f"agentguard: {printable(str(exc), one_line=False)}", file=sys.stderr)
        return EXIT_INPUT if "unreadable" in str(exc) else EXIT_USAGE
    summary = (
        f"mined {len(mined.constraints)} constraint(s) and {len(mined.tools)} tool(s) from "
        f"{mined.traces} run(s); {len(mined.pruned)} implied constraint(s) pruned"
    )
    if mined.separating is not None:
        summary += f"; rejects {mined.separating} of {mined.negatives} negative run(s)"
    if args.cases:
        from agentguard.mining.cases import policy_cases
        from agentguard.mining.sources import read
        from agentguard.terminal import json_text

        runs = read(args.traces, format=args.format, final_answer=args.final_answer)
        Path(args.cases).write_text(json_text(policy_cases(runs)) + "\n", encoding="utf-8")
        summary += f"; {len(runs)} policy case(s) written to {args.cases}"
    if args.output:
        Path(args.output).write_text(mined.text, encoding="utf-8")
        summary += f"; written to {args.output}"
    else:
        sys.stdout.write(mined.text)
    print(f"agentguard: {summary}", file=sys.stderr)
    return EXIT_OK
