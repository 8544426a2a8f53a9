"""``agentguard mcp-proxy SPEC [options] -- COMMAND [ARGS...]``: the firewall as an MCP
server in front of another one (see docs/mcp.md).

Needs the ``mcp`` extra; the adapter is imported only when the command runs, so the
rest of the CLI works without it. Everything the proxy says goes to stderr (stdout is
the MCP channel in stdio mode).

The command is dispatched before the CLI imports its other commands (:func:`main`), and
this module imports only the standard library at first: a stdio server is started
before the SDK, the firewall and the spec are loaded (:func:`run`), so it gets ready
while the proxy does (docs/mcp.md).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

EXIT_OK, EXIT_USAGE = 0, 2
PROG: Final = "agentguard mcp-proxy"
DESCRIPTION: Final = (
    "Start the MCP server COMMAND (stdio) and serve its tools to MCP clients, checking "
    "every tools/call against SPEC before forwarding it. Refused calls are answered with "
    "an MCP tool error naming the constraint and how to satisfy it."
)
USAGE: Final = f"{PROG} SPEC [options] (-- COMMAND [ARGS...] | --url URL)"


def main(argv: Sequence[str]) -> int:
    """``agentguard mcp-proxy ARGV``, as :func:`agentguard.cli.main.main` dispatches it
    (before it imports the other commands): the same parser as the subcommand's, and the
    same exit codes and messages."""
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION, usage=USAGE)
    _configure(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except Exception as exc:
        from agentguard.errors import AgentGuardError  # (imported once the server started)

        if isinstance(exc, AgentGuardError):
            _say(str(exc))
            return EXIT_USAGE
        if isinstance(exc, OSError):  # an output path that cannot be written, a missing input
            _say(f"{exc.filename or ''}: {exc.strerror or exc}" if exc.filename else str(exc))
            return EXIT_USAGE
        raise


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``agentguard mcp-proxy`` (listed in ``agentguard --help``)."""
    parser = subparsers.add_parser(
        "mcp-proxy",
        help="serve an MCP server's tools through the firewall (stdio or streamable HTTP)",
        description=DESCRIPTION,
        usage=USAGE,
    )
    _configure(parser)


def _configure(parser: argparse.ArgumentParser) -> None:
    _add_options(parser)
    parser.add_argument("spec", help="the .ltl spec")
    parser.add_argument(
        "server",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND [ARGS...]",
        help="the MCP server to start, after -- (options may also come between SPEC and --)",
    )
    parser.set_defaults(func=run)


def _add_options(parser: argparse.ArgumentParser, *, defaults: bool = True) -> None:
    """The options, on the subcommand (with defaults) and on the parser of what comes
    between SPEC and ``--`` (without, so only what is given there overrides)."""

    def d(value: Any) -> Any:
        return value if defaults else argparse.SUPPRESS

    files = (  # the files the proxy writes (or reads: the key)
        ("--log", "append the decision log here"),
        ("--log-key-file", "HMAC every log line with the key in FILE (audit verify --key-file)"),
        ("--log-heads", "append each log line's chain head to FILE (audit verify --heads)"),
        ("--report", "append each finished session's report (one JSON line) here"),
    )
    for flag, text in files:
        parser.add_argument(flag, type=Path, default=d(None), metavar="FILE", help=text)
    parser.add_argument(
        "--http",
        type=int,
        default=d(None),
        metavar="PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio",
    )
    parser.add_argument(
        "--url",
        default=d(None),
        metavar="URL",
        help="front the remote MCP server at URL instead of starting a COMMAND",
    )
    parser.add_argument(
        "--transport",
        choices=("http", "sse"),
        default=d("http"),
        help="with --url: streamable HTTP (default) or the older HTTP+SSE transport",
    )
    parser.add_argument(
        "--host",
        default=d("127.0.0.1"),
        help="with --http: the address to bind (default 127.0.0.1)",
    )
    parser.add_argument(
        "--stateless",
        choices=("refuse", "per-request"),
        default=d("refuse"),
        help=(
            "with --http: how a request that belongs to no MCP session (the stateless "
            "protocol) is served: refused (default), or judged as a run of its own"
        ),
    )
    parser.add_argument(
        "--offer",
        choices=("narrow", "annotate"),
        default=d(None),
        help=(
            "tell each client what may run now: tools/list without the tools refused now "
            "(narrow) or with them marked (annotate), and tools/list_changed when that set "
            "changes; every call is still checked"
        ),
    )
    parser.add_argument(
        "--no-schema-checks",
        dest="schema_checks",
        action="store_false",
        default=d(True),
        help="do not turn the server's tool input schemas into tool declarations (nor check their patterns)",
    )
    parser.add_argument(
        "--soft-block-limit",
        type=int,
        default=d(3),
        metavar="N",
        help="SOFT_BLOCK escalation limit",
    )
    parser.add_argument(
        "--load",
        action="append",
        default=d([]),
        metavar="MODULE",
        help="import MODULE first (it registers predicates); repeatable",
    )
    parser.add_argument(
        "--verbose", "-v", action="store_true", default=d(False), help="log every session event"
    )


def _split(args: argparse.Namespace) -> list[str]:
    """The server command; options given between SPEC and ``--`` are parsed into ``args``.

    argparse hands over everything after SPEC: the command itself when ``--`` follows
    SPEC directly (it drops that ``--``), else the options, ``--``, then the command.
    Some clients drop the ``--`` (the MCP Inspector removes the first one it sees), so
    without one the command starts at the first word that is neither one of the proxy's
    options nor an option's value: the server's own options after it stay the server's.
    """
    rest: list[str] = list(args.server)
    if rest[:1] == ["--"]:
        return rest[1:]
    if not rest or not rest[0].startswith("-"):
        return rest
    late = argparse.ArgumentParser(prog=PROG, add_help=False)
    _add_options(late, defaults=False)
    cut = rest.index("--") if "--" in rest else _command_start(late, rest)
    vars(args).update(vars(late.parse_args(rest[:cut])))
    return rest[cut + 1 :] if cut < len(rest) and rest[cut] == "--" else rest[cut:]


def _command_start(parser: argparse.ArgumentParser, words: list[str]) -> int:
    """The index of the first word of ``words`` that is not the proxy's option or its value."""
    takes_value = {
        flag: action.nargs != 0
        for action in parser._actions  # (argparse lists its options nowhere else)
        for flag in action.option_strings
    }
    index = 0
    while index < len(words) and words[index].startswith("-"):
        flag = words[index].split("=", 1)[0]
        if flag not in takes_value:
            break  # not the proxy's: the command (a server option would follow its program)
        index += 2 if takes_value[flag] and "=" not in words[index] else 1
    return min(index, len(words))


def run(args: argparse.Namespace) -> int:
    command = _split(args)
    if command and args.url is not None:
        _say("give the MCP server as a COMMAND or as --url, not both")
        return EXIT_USAGE
    if not command and args.url is None:
        _say("no MCP server command given: agentguard mcp-proxy SPEC -- COMMAND [ARGS...]")
        return EXIT_USAGE
    started = _start_early(command) if command and args.http is None else None
    early = None if started is None else _early_module().begin(started)
    try:
        return _checked(args, command, (started, early))
    finally:  # (once relayed, both were stopped with the relay: this finds them gone)
        if early is not None:
            early.handover()
        if started is not None:
            _process_module().stop(started)


def _process_module() -> Any:
    """The gateway's process helpers (standard library only: cheap to import first)."""
    return importlib.import_module("agentguard.integrations._mcp_process")


def _early_module() -> Any:
    """The handshake relayed while the proxy loads (standard library only, as above)."""
    return importlib.import_module("agentguard.integrations._mcp_early")


def _start_early(command: list[str]) -> Any:
    """The stdio server, started before the proxy imports and checks anything, so it
    gets ready while the proxy does (docs/mcp.md); None if it cannot be started (then
    the gateway starts it as any other session and says why it cannot, after the spec is
    checked, as before). Stopped again if the proxy stops before it serves."""
    try:
        return _process_module().start(command)
    except (OSError, ValueError):  # ValueError: a NUL byte in an argument
        return None


def _checked(args: argparse.Namespace, command: list[str], started: tuple[Any, Any]) -> int:
    """The spec and options checked, then served (``started``: the server, if running,
    and its handshake relayed meanwhile, if it is)."""
    import logging

    from agentguard.errors import MissingExtraError, SpecError

    try:  # the adapter lives at the edge; imported by name, as guard() does
        gateway_module: Any = importlib.import_module("agentguard.integrations.mcp")
    except MissingExtraError as exc:
        _say(str(exc))
        return EXIT_USAGE
    from agentguard.cli.main import _import_plugins
    from agentguard.enforcement.log_anchor import HeadFile
    from agentguard.language import load_spec
    from agentguard.terminal import printable

    if not _import_plugins(args.load):
        return EXIT_USAGE
    try:
        spec = load_spec(args.spec)
    except SpecError as exc:
        _say(str(exc))
        return EXIT_USAGE
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(message)s",
    )
    kwargs: dict[str, Any] = {"soft_block_limit": args.soft_block_limit}
    if args.log is not None:
        kwargs["log_path"] = args.log
    elif args.log_key_file is not None or args.log_heads is not None:
        _say("--log-key-file and --log-heads go with --log FILE")
        return EXIT_USAGE
    if args.log_key_file is not None:
        try:
            kwargs["log_key"] = args.log_key_file.read_bytes().strip()
        except OSError as exc:
            _say(f"{printable(args.log_key_file)}: {printable(exc.strerror or exc)}")
            return EXIT_USAGE
        if not kwargs["log_key"]:
            _say(f"{printable(args.log_key_file)}: the key file is empty")
            return EXIT_USAGE
    if args.log_heads is not None:
        kwargs["log_anchor"] = HeadFile(args.log_heads)
    from agentguard.cli.otlp import tracer_provider

    try:  # the standard OTEL_* variables: spans exported as any instrumented program's
        provider = tracer_provider(os.environ, "agentguard-mcp-proxy")
    except (MissingExtraError, ValueError) as exc:
        _say(str(exc))
        return EXIT_USAGE
    if provider is not None:
        kwargs["tracer_provider"] = provider
    try:
        return _serve(gateway_module, spec, command, args, kwargs, started)
    finally:
        if provider is not None:
            provider.shutdown()  # flushes the spans still batched


def _serve(
    gateway_module: Any,
    spec: Any,
    command: list[str],
    args: argparse.Namespace,
    kwargs: Any,
    started: tuple[Any, Any],
) -> int:
    gateway = gateway_module.McpGateway(
        spec,
        command,
        url=args.url,
        transport=args.transport if args.url is not None else None,
        report_path=args.report,
        schema_checks=args.schema_checks,
        firewall_kwargs=kwargs,
        stateless=args.stateless,
        offer=args.offer,
    )
    import anyio

    from agentguard.enforcement.agent_tools import ToolMismatchError

    try:
        if args.http is None:
            anyio.run(gateway_module.serve_stdio, gateway, *started)
        else:
            anyio.run(_serve_http, gateway_module, gateway, args.host, args.http)
    except (gateway_module.GatewayError, ToolMismatchError) as exc:
        _say(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:  # pragma: no cover - the signal watcher normally gets it first
        gateway.finish_all()
    except BaseException as exc:  # anyio's task groups raise an exception group around it
        found = _first(exc, gateway_module.GatewayError) or _first(exc, ToolMismatchError)
        if found is None:
            raise
        _say(str(found))
        return EXIT_USAGE
    return EXIT_OK


async def _serve_http(module: Any, gateway: Any, host: str, port: int) -> None:
    await module.serve_http(gateway, host=host, port=port)


def _first(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first ``kind`` in ``exc``, an exception group (nested or not), or None.

    (Read through ``exceptions``, which both the builtin group and the ``exceptiongroup``
    backport anyio uses on Python 3.10 have.)"""
    if isinstance(exc, kind):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _first(inner, kind)
        if found is not None:
            return found
    return None


def _say(message: str) -> None:
    print(f"agentguard mcp-proxy: {message}", file=sys.stderr)
