"""The five-stage executability oracle: order, labels, FED, replay against an environment."""

from __future__ import annotations

from typing import Any

import pytest

from agentguard.language.ast import Domain, Event, Once, Param, Spec, ToolDecl
from agentguard.pec.declarations import (
    declarations_from_json_schema,
    declarations_from_params,
    declarations_from_spec,
)
from agentguard.pec.environment import Execution, is_error_result
from agentguard.pec.episode import Episode
from agentguard.pec.labels import FailureLabel
from agentguard.pec.oracle import CallContext, Oracle
from agentguard.tools.values import occurs_in
from agentguard.trace.model import Call, Trace

TOOLS = declarations_from_json_schema(
    [
        {
            "name": "lookup_order",
            "parameters": {
                "type": "object",
                "properties": {"customer": {"type": "string"}},
                "required": ["customer"],
            },
        },
        {
            "name": "refund",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
                "required": ["order_id", "amount"],
            },
        },
    ]
)


class Shop:
    """A small real environment: refunds need an order that exists and is not refunded yet."""

    def __init__(self) -> None:
        self.refunded: set[str] = set()
        self.resets: list[str] = []
        self.closed = 0

    def reset(self, task_id: str) -> None:
        self.refunded = set()
        self.resets.append(task_id)

    def execute(self, call: Call) -> Execution:
        if call.name == "lookup_order":
            return True, {"orders": [{"id": "A1"}, {"id": "A2"}]}
        order = call.args["order_id"]
        if order in self.refunded:
            return False, {"error": f"{order} already refunded"}
        self.refunded.add(order)
        return True, {"refunded": order}

    def close(self) -> None:
        self.closed += 1


def ep(*calls: Call, success: bool = True) -> Episode:
    return Episode("task", calls, success, {"method": "m"})


def with_source(tools: dict[str, ToolDecl]) -> dict[str, ToolDecl]:
    """`refund.order_id from results(lookup_order)` via an .ltl tool declaration."""
    decl = ToolDecl(
        "refund",
        (
            Param("order_id", "str", source=Domain("results", "lookup_order")),
            Param("amount", "number", bound=(">=", 0)),
        ),
    )
    return {**tools, **declarations_from_spec(Spec("shop", tools=(decl,)))}


LOOKUP = Call("lookup_order", {"customer": "c"}, {"orders": [{"id": "A1"}]})


def test_fully_executable_episode() -> None:
    """All calls pass: FED = T + 1 and no label."""
    scored = Oracle.build(tools=TOOLS).score(
        ep(LOOKUP, Call("refund", {"order_id": "A1", "amount": 3}))
    )
    assert scored.fed == 3
    assert scored.executable
    assert scored.failure is None


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (Call("refnud", {}), "unknown tool"),
        (Call("refund", {"order_id": "A1"}), "missing required argument 'amount'"),
        (Call("refund", {"order_id": 7, "amount": 1}), "'order_id' must be a str, got int 7"),
        (Call("refund", {"order_id": "A1", "amount": True}), "must be a number, got bool"),
        (Call("refund", {"order_id": "A1", "amount": 1, "why": "x"}), "unexpected argument"),
    ],
)
def test_schema_failures(call: Call, reason: str) -> None:
    """Unknown tools, missing, mistyped or unexpected arguments fail the schema stage."""
    scored = Oracle.build(tools=TOOLS).score(ep(LOOKUP, call))
    assert scored.fed == 2
    assert scored.failure is not None
    assert scored.failure.label is FailureLabel.SCHEMA
    assert reason in scored.failure.reason


def test_dependency_from_ltl_declaration() -> None:
    """A `from results(lookup_order)` value that never appeared is a dependency failure."""
    oracle = Oracle.build(tools=with_source(TOOLS))
    good = oracle.score(ep(LOOKUP, Call("refund", {"order_id": "A1", "amount": 1})))
    bad = oracle.score(ep(LOOKUP, Call("refund", {"order_id": "Z9", "amount": 1})))
    early = oracle.score(ep(Call("refund", {"order_id": "A1", "amount": 1}), LOOKUP))
    assert good.executable
    assert bad.fed == 2
    assert bad.failure
    assert bad.failure.label is FailureLabel.DEPENDENCY
    assert early.fed == 1
    assert early.failure
    assert early.failure.label is FailureLabel.DEPENDENCY


def test_ltl_bound_is_schema() -> None:
    """A declared bound (`amount: number >= 0`) is part of the schema stage."""
    scored = Oracle.build(tools=with_source(TOOLS)).score(
        ep(LOOKUP, Call("refund", {"order_id": "A1", "amount": -5}))
    )
    assert scored.failure
    assert scored.failure.label is FailureLabel.SCHEMA


def test_precondition_hook_sees_prefix_with_proposed_call() -> None:
    """The hook gets the declaration and the prefix ending with the proposed call."""
    seen: list[tuple[str, ...]] = []

    def verified_first(decl: ToolDecl, prefix: Trace) -> bool:
        seen.append(prefix.names)
        return "lookup_order" in prefix.names[:-1]

    requires = Once(Event("lookup_order"))
    tools = {**TOOLS, "refund": ToolDecl("refund", TOOLS["refund"].params, requires)}
    oracle = Oracle.build(tools=tools, precondition=verified_first)
    bad = oracle.score(ep(Call("refund", {"order_id": "A1", "amount": 1})))
    assert bad.failure
    assert bad.failure.label is FailureLabel.PRECONDITION
    assert bad.fed == 1
    assert oracle.score(ep(LOOKUP, Call("refund", {"order_id": "A1", "amount": 1}))).executable
    assert seen[-1] == ("lookup_order", "refund")


SHOP_SPEC = """spec shop
tool lookup_order(customer: str)
tool verify_identity(customer: str)
tool issue_refund(order_id: str from results(lookup_order), amount: number >= 0)
    requires O verify_identity
"""


def test_ltl_spec_default_precondition_and_dependency() -> None:
    """With a parsed .ltl spec the default hook evaluates `requires` by the AgentLTL core."""
    from agentguard import parse_spec

    oracle = Oracle.build(tools=declarations_from_spec(parse_spec(SHOP_SPEC)))
    lookup = Call("lookup_order", {"customer": "c"}, {"orders": [{"id": "A1"}]})
    verify = Call("verify_identity", {"customer": "c"}, "ok")
    refund = Call("issue_refund", {"order_id": "A1", "amount": 5})
    assert oracle.score(ep(lookup, verify, refund)).executable
    unverified = oracle.score(ep(lookup, refund, verify))
    assert unverified.fed == 2
    assert unverified.failure is not None
    assert unverified.failure.label is FailureLabel.PRECONDITION
    made_up = oracle.score(
        ep(verify, lookup, Call("issue_refund", {"order_id": "B7", "amount": 5}))
    )
    assert made_up.fed == 3
    assert made_up.failure is not None
    assert made_up.failure.label is FailureLabel.DEPENDENCY


def test_environment_rejection_is_state_consistency() -> None:
    """A second refund of the same order is rejected by the environment at its true depth."""
    shop = Shop()
    oracle = Oracle.build(tools=TOOLS, environment=shop)
    refund = Call("refund", {"order_id": "A1", "amount": 1})
    scored = oracle.score(ep(LOOKUP, refund, refund))
    assert scored.fed == 3
    assert scored.failure
    assert scored.failure.label is FailureLabel.STATE
    assert "already refunded" in scored.failure.reason
    assert shop.resets == ["task"]
    assert shop.closed == 1


def test_replayed_results_feed_dependencies() -> None:
    """With an environment, dependencies check the replayed results, not the recorded ones."""
    lookup_without_result = Call("lookup_order", {"customer": "c"})
    oracle = Oracle.build(tools=with_source(TOOLS), environment=Shop())
    scored = oracle.score(
        ep(lookup_without_result, Call("refund", {"order_id": "A2", "amount": 1}))
    )
    assert scored.executable


def test_recorded_error_is_information() -> None:
    """Without an environment, a recorded error outcome is an information failure."""
    scored = Oracle.build(tools=TOOLS).score(
        ep(Call("lookup_order", {"customer": "c"}, "Error during execution: boom"))
    )
    assert scored.failure
    assert scored.failure.label is FailureLabel.INFORMATION


def test_ties_broken_in_label_order() -> None:
    """A call failing schema and dependency both is labelled schema (the earlier stage)."""
    oracle = Oracle.build(tools=with_source(TOOLS))
    scored = oracle.score(ep(Call("refund", {"order_id": "Z", "amount": "x"})))
    assert scored.failure
    assert scored.failure.label is FailureLabel.SCHEMA


def test_no_tool_episode() -> None:
    """A no-tool episode fails precondition at depth 1 unless the task allows no tools."""
    oracle = Oracle.build(tools=TOOLS, environment=Shop())
    bad = oracle.score(Episode("t", (), False))
    ok = oracle.score(Episode("t", (), True, no_tool_allowed=True))
    assert bad.fed == 1
    assert bad.failure
    assert bad.failure.label is FailureLabel.PRECONDITION
    assert ok.fed == 2
    assert ok.executable


def test_offered_tools_and_extra_checks() -> None:
    """Tools not offered at a turn fail schema; an extra check joins its stage."""

    def offered(ctx: CallContext) -> set[str]:
        return {"lookup_order"} if ctx.turn == 0 else set(TOOLS)

    def no_big(ctx: CallContext) -> str | None:
        return "too big" if ctx.call.args.get("amount", 0) > 100 else None

    oracle = Oracle.build(tools=TOOLS, offered=offered, extra={FailureLabel.PRECONDITION: [no_big]})
    refund = Call("refund", {"order_id": "A1", "amount": 1})
    early = oracle.score(Episode("t", (LOOKUP, refund), True, turns=(0, 0)))
    assert early.failure
    assert "not offered yet" in early.failure.reason
    assert oracle.score(Episode("t", (LOOKUP, refund), True, turns=(0, 1))).executable
    big = oracle.score(
        Episode("t", (LOOKUP, Call("refund", {"order_id": "A", "amount": 500})), True, turns=(0, 1))
    )
    assert big.failure
    assert big.failure.label is FailureLabel.PRECONDITION


def test_declarations_from_params_mapping() -> None:
    """A plain mapping gives required/optional parameters of any or named type."""
    tools = declarations_from_params({"a": ["x", "y?"], "b": {"n": "integer"}})
    oracle = Oracle.build(tools=tools)
    assert oracle.score(ep(Call("a", {"x": 1}))).executable
    assert not oracle.score(ep(Call("a", {"y": 1}))).executable
    assert not oracle.score(ep(Call("b", {"n": "1"}))).executable


@pytest.mark.parametrize(
    ("result", "error"),
    [
        ("Error during execution: x", True),
        ({"error": "no"}, True),
        ({"login_status": False}, True),
        ('{"success": false}', True),
        ({"error": None, "v": 1}, False),
        ("fine", False),
        (3, False),
    ],
)
def test_error_detector(result: Any, error: bool) -> None:
    """BFCL's three failure signals are detected; ordinary results are not."""
    assert is_error_result(result) is error


def test_occurs_in_keys_leaves_and_json_text() -> None:
    """Values are found as leaves, object keys, or inside JSON text results."""
    assert occurs_in("A1", '{"orders": [{"id": "A1"}]}')
    assert occurs_in(12, {"12": "x"}) is False
    assert occurs_in("k", {"k": 1})
    assert not occurs_in(True, {"x": 1})


def test_recorded_tool_error_flag_is_information_failure() -> None:
    """A call its log marks as an error fails the information stage, whatever its text."""
    from agentguard.pec.episode import Episode
    from agentguard.pec.oracle import CallContext, information_check
    from agentguard.trace import Call, Trace

    check = information_check(lambda outcome: False)  # an error detector that never fires
    flagged = Call("search", {"q": "x"}, "nothing useful here", 0, error=True)
    clean = Call("search", {"q": "x"}, "nothing useful here", 0)
    episode = Episode(task_id="t", calls=(flagged,), success=False)
    assert check(CallContext(episode, 0, flagged, Trace(), flagged.result)) is not None
    assert check(CallContext(episode, 0, clean, Trace(), clean.result)) is None


def test_bound_ignores_python_bool_int_equality() -> None:
    """A bound ``= 1`` rejects True in the oracle: a bool is not a number for bounds."""
    decl = ToolDecl("flag", (Param("level", "any", bound=("=", 1)),))
    oracle = Oracle.build(tools={"flag": decl})
    for value, fits in [(1, True), (1.0, True), (True, False), ("1", False)]:
        assert oracle.score(ep(Call("flag", {"level": value}))).executable is fits, value


def test_regex_bound_is_a_schema_check() -> None:
    """A ``~`` bound accepts the strings its pattern matches and fails the rest as schema."""
    decl = ToolDecl("find", (Param("q", "str", bound=("~", "^ab")),))
    oracle = Oracle.build(tools={"find": decl})
    assert oracle.score(ep(Call("find", {"q": "abc"}))).executable
    scored = oracle.score(ep(Call("find", {"q": "xab"})))
    assert scored.failure is not None
    assert scored.failure.label is FailureLabel.SCHEMA


@pytest.mark.parametrize("op", ["!~", "in", "contains"])
def test_every_bound_operator_is_enforced(op: str) -> None:
    """Bounds with ``!~``, ``in`` and ``contains`` are enforced, not skipped."""
    limit: Any = {"!~": "^x", "in": ("a", "b"), "contains": "a"}[op]
    decl = ToolDecl("t", (Param("v", "str", bound=(op, limit)),))
    scored = Oracle.build(tools={"t": decl}).score(ep(Call("t", {"v": "xyz"})))
    assert scored.failure is not None
    assert scored.failure.label is FailureLabel.SCHEMA


JSON_TOOLS = declarations_from_json_schema(
    {
        "search": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["fast", "deep"]},
                "level": {"type": "integer", "enum": [0, 1]},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "additionalProperties": True,
        }
    }
)


@pytest.mark.parametrize(
    ("args", "fits"),
    [
        ({"mode": "deep", "tags": ["a"], "other": 1}, True),
        ({"mode": "slow"}, False),
        ({"level": 1}, True),
        ({"level": False}, False),
        ({"tags": ["a", 2]}, False),
    ],
)
def test_json_schema_enum_items_and_extra(args: dict[str, Any], fits: bool) -> None:
    """A JSON Schema's enum, array items and additionalProperties are checked."""
    assert Oracle.build(tools=JSON_TOOLS).score(ep(Call("search", args))).executable is fits


def test_dependency_from_args_is_checked() -> None:
    """A ``from args(tool.path)`` source is a dependency too: the value must have been passed."""
    decl = ToolDecl("pay", (Param("to", "str", source=Domain("args", "open", ("id",))),))
    tools = {"pay": decl, "open": ToolDecl("open", (Param("id", "str"),))}
    oracle = Oracle.build(tools=tools)
    assert oracle.score(ep(Call("open", {"id": "A"}), Call("pay", {"to": "A"}))).executable
    scored = oracle.score(ep(Call("open", {"id": "A"}), Call("pay", {"to": "B"})))
    assert scored.failure is not None
    assert scored.failure.label is FailureLabel.DEPENDENCY


def test_a_failing_predicate_is_an_error_not_a_label() -> None:
    """A ``requires`` whose user predicate is not registered raises instead of labelling."""
    from agentguard import parse_spec
    from agentguard.errors import EvaluationError

    spec = parse_spec('predicate ok(v)\ntool t(x: str) requires ok("a")')
    oracle = Oracle.build(tools=declarations_from_spec(spec))
    with pytest.raises(EvaluationError, match="call 1 't'"):
        oracle.score(ep(Call("t", {"x": "a"})))


def test_empty_declarations_know_no_tool() -> None:
    """An empty mapping of declarations fails every tool call as unknown."""
    scored = Oracle.build(tools={}).score(ep(Call("a", {})))
    assert scored.failure is not None
    assert "unknown tool 'a'" in scored.failure.reason


def test_unknown_parameter_type_is_refused() -> None:
    """A ``{tool: {param: type}}`` mapping with an unknown type name is a PecError."""
    from agentguard.pec.errors import PecError

    with pytest.raises(PecError, match="unknown type 'decimal'"):
        declarations_from_params({"a": {"n": "decimal"}})
