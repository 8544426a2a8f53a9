"""Tools declared while a run goes on (an MCP server's tools/list_changed): checked like
declared ones from the next call, the spec's own declarations kept."""

from __future__ import annotations

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall
from agentguard.language import ast as A
from agentguard.language import parse_spec
from agentguard.tools.json_schema import declaration_from_json_schema

SPEC = parse_spec("spec s\nconstraint no_force severity HARD_STOP := G !wipe(force = true)\n")
OWN = parse_spec(
    "spec own\ntool lookup(order_id: str)\nconstraint once := G !(lookup & Y lookup)\n"
)
LOOKUP = declaration_from_json_schema("lookup", {"type": "object"})
WIPE = declaration_from_json_schema(
    "wipe",
    {
        "type": "object",
        "properties": {"target": {"type": "string"}, "force": {"type": "boolean"}},
        "required": ["target"],
    },
)


def test_a_tool_learned_mid_run_is_checked_not_refused_as_unknown() -> None:
    """Unknown before it is declared; then its schema is checked and the spec judges it."""
    fw = Firewall(SPEC)
    fw.declare_tools([LOOKUP])  # the server's first listing
    assert "unknown tool 'wipe'" in fw.propose("wipe", {"target": "a"}).message
    fw.declare_tools([WIPE])  # listed again after tools/list_changed
    allowed = fw.propose("wipe", {"target": "a", "force": False})
    assert allowed.action is Action.ALLOW
    fw.complete(fw.start(allowed), "ok")
    assert "missing required argument 'target'" in fw.propose("wipe", {}).message
    assert fw.propose("wipe", {"target": "b", "force": True}).action is Action.STOP


def test_the_specs_own_declaration_wins_and_a_learned_one_is_replaced() -> None:
    """A learned declaration of a tool the spec declares is ignored; a second learned
    declaration of the same tool replaces the first (its server changed the schema)."""
    fw = Firewall(OWN)
    fw.declare_tools([LOOKUP])  # closed, no arguments: the spec's line takes order_id
    assert fw.propose("lookup", {"order_id": "A"}).action is Action.ALLOW
    fw.declare_tools([WIPE])
    wider = declaration_from_json_schema(
        "wipe", {"type": "object", "properties": {"target": {}, "dry": {"type": "boolean"}}}
    )
    fw.declare_tools([wider])
    assert fw.propose("wipe", {"dry": True}).action is Action.ALLOW


def test_without_enforced_tools_nothing_learned_is_checked() -> None:
    """enforce_tools=False: declarations learned later are not checked either."""
    fw = Firewall(parse_spec("spec s\nconstraint c := G !x\n"), enforce_tools=False)
    fw.declare_tools([A.ToolDecl("wipe", (A.Param("target", "str"),))])
    assert fw.propose("wipe", {}).action is Action.ALLOW
