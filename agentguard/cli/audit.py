"""``agentguard audit verify LOG``: is a decision log intact?

Wired into the main CLI by :func:`add_parser` (see ``_PLUGINS`` in ``cli/main.py``).
Exit codes: 0 every line verifies; 1 a line does not (the first bad one is named, as
``LOG:LINE: reason``); 2 misuse (no such file, unreadable key file). What a passing
check proves, and what it does not, is in docs/audit.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from agentguard.enforcement.audit import AuditResult, Problem, verify_lines
from agentguard.enforcement.log_anchor import HeadsFileError, Witnessed, read_witness
from agentguard.terminal import json_text, printable

EXIT_OK, EXIT_TAMPERED, EXIT_USAGE = 0, 1, 2


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``audit verify`` on the main parser's sub-commands."""
    parser = subparsers.add_parser("audit", help="check that a decision log is intact")
    verbs = parser.add_subparsers(dest="audit_command", required=True)
    verify = verbs.add_parser(
        "verify",
        help="verify the hash chain (and HMACs) of a decision log",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    verify.add_argument("log", help="a JSON-lines decision log written by the firewall")
    keys = verify.add_mutually_exclusive_group()
    keys.add_argument("--key", default=None, help="the HMAC key the firewall was given (text)")
    keys.add_argument("--key-file", default=None, help="read the HMAC key from this file")
    verify.add_argument(
        "--require-finish",
        action="store_true",
        help="fail if a run has no finish line (catches truncation at the end)",
    )
    verify.add_argument(
        "--heads",
        default=None,
        metavar="FILE",
        help=(
            "the heads a witness kept (Firewall(log_anchor=HeadFile(FILE))): fail if a "
            "run's chain does not reach each one (lines or runs removed at the end)"
        ),
    )
    verify.add_argument(
        "--heads-log",
        default=None,
        metavar="PATH",
        help=(
            "with --heads: the log's path as the witness names it (default: LOG's "
            "absolute path; give it when verifying a copy)"
        ),
    )
    verify.add_argument("--json", action="store_true", help="print the result as JSON")
    verify.set_defaults(func=run)


def _heads(path: Path, log: str) -> Witnessed:
    """The heads in ``path`` that name the log at ``log`` (or none). A heads file naming
    only other logs anchors nothing here: that is an error, not a pass (a copy of the log
    verified elsewhere needs ``--heads-log``)."""
    with path.open(encoding="utf-8") as heads:
        try:
            witnessed = read_witness(heads, printable(path), log=log)
        except UnicodeDecodeError as exc:
            raise HeadsFileError(f"{printable(path)}: not UTF-8 text ({exc.reason})") from None
    if not witnessed.anchored and witnessed.other_logs:
        names = ", ".join(sorted(printable(n) for n in witnessed.other_logs)[:3])
        raise HeadsFileError(
            f"{printable(path)}: no head names the log {printable(log)} (it names {names}); "
            "give the log's path as the witness names it with --heads-log"
        )
    return witnessed


def _foreign(result: AuditResult, witnessed: Witnessed) -> AuditResult:
    """A run of this log that the witness anchored for another log only was copied in."""
    for run_id in result.runs:
        other = witnessed.foreign.get(run_id)
        if other is not None:
            reason = (
                f"run {run_id} was anchored for another log ({other}), never for this one: "
                "it was copied in"
            )
            return dataclasses.replace(result, problem=Problem(result.lines, reason))
    return result


def run(args: argparse.Namespace) -> int:
    path = Path(args.log)
    key: bytes | None = None
    try:
        if args.key_file is not None:
            key = Path(args.key_file).read_bytes().strip()
        elif args.key is not None:
            key = args.key.encode()
        log_name = args.heads_log or str(path.resolve())
        witnessed = None if args.heads is None else _heads(Path(args.heads), log_name)
        anchored = None if witnessed is None else witnessed.anchored
        with path.open(encoding="utf-8", newline="") as handle:
            result = verify_lines(
                handle, key=key, require_finish=args.require_finish, anchored=anchored
            )
        if witnessed is not None and result.ok:
            result = _foreign(result, witnessed)
    except HeadsFileError as exc:
        print(f"agentguard: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        where = printable(exc.filename or path)
        print(f"agentguard: {where}: {printable(exc.strerror or exc)}", file=sys.stderr)
        return EXIT_USAGE
    except UnicodeDecodeError as exc:
        print(f"agentguard: {printable(path)}: not UTF-8 text ({exc.reason})", file=sys.stderr)
        return EXIT_TAMPERED
    if args.json:
        print(json_text({"log": str(path), **result.to_dict(), "anchored": anchored is not None}))
    elif result.problem is not None:
        where = printable(f"{path}:{result.problem.line}")
        print(f"{where}: {printable(result.problem.reason)}", file=sys.stderr)
    else:
        macs = "chain and HMACs" if result.macs_checked else "chain (no --key: HMACs not checked)"
        if anchored is not None:
            macs += f", through {sum(map(len, anchored.values()))} anchored head(s)"
        print(f"{printable(path)}: intact: {result.lines} lines, {len(result.runs)} run(s), {macs}")
        for run_id, head in result.runs.items():
            note = "  (no finish line)" if run_id in result.unfinished else ""
            print(f"  run {printable(run_id)}: head {head}{note}")
    return EXIT_OK if result.ok else EXIT_TAMPERED
