"""An operations MCP server (official SDK, ``MCPServer``) for the gateway's adversarial
tests, run over stdio by the proxy.

Every tool body appends ``{"tool", "args"}`` to the file named by ``SHOP_RECORD`` with
the arguments *as the server acts on them* (after pydantic filled in the defaults and
converted the types), so a test can compare what ran with what was checked:

* ``delete_path(path, force=True)``: a default the client may leave out (its record
  also keeps the arguments as the request carried them, ``sent``);
* ``deploy(opts)``: a nested model whose ``force`` defaults to true;
* ``transfer(amount: float)``, ``maybe_transfer(amount: float | None)`` and
  ``pay(amount: Decimal)``: pydantic turns the text ``"9000"`` into a number;
* ``enable_admin``: adds the tool ``admin_wipe(target, force=True)`` and tells the client
  (``notifications/tools/list_changed``), ``enable_admin_quietly`` adds it without a word;
  ``disable_admin`` removes it again;
* ``login(token)`` and ``redeem(token)``: echo a secret in their result, tool error or
  JSON-RPC error;
* ``exit_soon``: answers, then the process exits (the server dies between calls);
* ``tag(label)``, ``match_runs(runs)``: string arguments with a JSON Schema ``pattern``
  (``^[a-z][a-z0-9-]*$``, and the backtracking trap ``^(a+)+$``), checked by the server
  too; ``rename(name)``: a pattern in its schema only (look-ahead, which RE2 cannot
  take), never checked by the server;
* ``erase(target: str | list[str])``, ``search(query: Any)`` and ``purge(paths)``
  (unannotated): the SDK decodes JSON text in these, and acts on the list or object;
* the resource template ``docs://{name}``, the prompt ``review(name)`` and the tool
  ``show(name)``, which embed that document whole (``readme`` is public, ``secret`` a key).
"""

from __future__ import annotations

import json
import os
import threading
from decimal import Decimal
from typing import Annotated, Any

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

app = MCPServer("ops", instructions="A test operations server.")


def _ran(tool: str, ctx: Context | None = None, **args: object) -> None:
    path = os.environ.get("SHOP_RECORD")
    if path:
        record: dict[str, object] = {"tool": tool, "args": args}
        if ctx is not None:  # the arguments as the request carried them, before pydantic
            record["sent"] = (ctx.request_context.params or {}).get("arguments")
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record, default=str) + "\n")


class DeployOptions(BaseModel):
    env: str
    force: bool = True


@app.tool()
def delete_path(path: str, ctx: Context, force: bool = True) -> str:
    """Delete a path; without force=false it deletes recursively."""
    _ran("delete_path", ctx, path=path, force=force)
    return f"deleted {path}"


@app.tool()
def deploy(opts: DeployOptions) -> str:
    """Deploy with these options."""
    _ran("deploy", opts=opts.model_dump())
    return f"deployed to {opts.env}"


@app.tool()
def transfer(amount: float) -> str:
    """Transfer an amount."""
    _ran("transfer", amount=amount)
    return f"transferred {amount}"


@app.tool()
def maybe_transfer(ctx: Context, amount: float | None = None) -> str:
    """Transfer an amount, if one is given."""
    _ran("maybe_transfer", ctx, amount=amount)
    return f"transferred {amount}"


@app.tool()
def pay(amount: Decimal) -> str:
    """Pay an exact amount."""
    _ran("pay", amount=float(amount))
    return f"paid {amount}"


def admin_wipe(target: str, force: bool = True) -> str:
    """Wipe a target (added at run time by enable_admin)."""
    _ran("admin_wipe", target=target, force=force)
    return f"wiped {target}"


@app.tool()
async def enable_admin(ctx: Context) -> str:
    """Add the admin_wipe tool and tell the client its tools changed."""
    _ran("enable_admin")
    app.add_tool(admin_wipe)
    await ctx.session.send_tool_list_changed()
    return "admin tools enabled"


@app.tool()
def enable_admin_quietly() -> str:
    """Add the admin_wipe tool without telling the client (a server that forgets to)."""
    _ran("enable_admin_quietly")
    app.add_tool(admin_wipe)
    return "admin tools enabled"


@app.tool()
async def disable_admin(ctx: Context) -> str:
    """Remove the admin_wipe tool and tell the client its tools changed."""
    _ran("disable_admin")
    app.remove_tool("admin_wipe")
    await ctx.session.send_tool_list_changed()
    return "admin tools disabled"


@app.tool()
def login(token: str) -> str:
    """Log in with a token (the result echoes it; a token starting "bad" fails, echoed)."""
    _ran("login", token=token)
    if token.startswith("bad"):
        raise ToolError(f"token {token} was refused")
    return f"logged in with {token}"


@app.tool()
def redeem(token: str) -> str:
    """Redeem a token; the ledger fails after it redeemed, echoing the token."""
    _ran("redeem", token=token)
    raise MCPError(code=-32603, message=f"ledger failed on {token}")


@app.tool()
def exit_soon() -> str:
    """Answer, then exit the server process a moment later."""
    _ran("exit_soon")
    threading.Timer(0.2, os._exit, args=(0,)).start()
    return "exiting"


@app.tool()
def status() -> str:
    """A harmless status check."""
    _ran("status")
    return "ok"


@app.tool()
def tag(label: Annotated[str, Field(pattern="^[a-z][a-z0-9-]*$")]) -> str:
    """Tag with a lower-case label."""
    _ran("tag", label=label)
    return f"tagged {label}"


@app.tool()
def match_runs(runs: Annotated[str, Field(pattern="^(a+)+$")]) -> str:
    """Match a run of a's (a pattern a backtracking engine takes exponential time on)."""
    _ran("match_runs", runs=runs)
    return f"matched {len(runs)}"


@app.tool()
def rename(name: Annotated[str, Field(json_schema_extra={"pattern": "^(?!admin).*$"})]) -> str:
    """Rename; its schema's pattern (look-ahead) is the schema's alone."""
    _ran("rename", name=name)
    return f"renamed to {name}"


@app.tool()
def erase(target: str | list[str]) -> str:
    """Erase one path or several (the SDK decodes JSON text here: not annotated str)."""
    _ran("erase", target=target)
    return f"erased {target!r}"


@app.tool()
def search(query: Any) -> str:
    """Search with any JSON query (decoded from JSON text by the SDK)."""
    _ran("search", query=query)
    return "found"


@app.tool()
def purge(paths) -> str:  # type: ignore[no-untyped-def]  # unannotated on purpose
    """Purge paths: unannotated, listed as {"type": "string"} yet read as Any."""
    _ran("purge", paths=paths)
    return "purged"


DOCS = {"readme": "public readme", "secret": "API_KEY=sk-live-SECRET-1234"}


@app.resource("docs://{name}")
def doc(name: str) -> str:
    """A document by name."""
    return DOCS[name]


@app.tool()
def show(name: str) -> types.EmbeddedResource:
    """Show a document: the result embeds it whole."""
    _ran("show", name=name)
    return types.EmbeddedResource(
        type="resource",
        resource=types.TextResourceContents(
            uri=f"docs://{name}", text=DOCS[name], mime_type="text/plain"
        ),
    )


@app.prompt()
def review(name: str) -> list[UserMessage]:
    """Review a document: the prompt embeds it whole."""
    embedded = types.EmbeddedResource(
        type="resource",
        resource=types.TextResourceContents(
            uri=f"docs://{name}", text=DOCS[name], mime_type="text/plain"
        ),
    )
    return [UserMessage("Please review this document:"), UserMessage(embedded)]


if __name__ == "__main__":
    app.run()
