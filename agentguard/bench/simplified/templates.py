"""The 17 simplified-mode templates (AgentLTL Table 12 plus the two held-out patterns).

Simplified mode uses the four-tool pool {tool_a, tool_b, tool_c, tool_d}, 3-7 calls,
short inline prompts, sequential ``tool_a(seed + i)`` fan-out instead of
``tool_a_list``, and narrow parameters. Four templates (marked a/c in Table 12) admit a
transform variant: the seed transform is ``tool_a`` (variant ``"a"``) or ``tool_c``
(variant ``"c"``). Every template writes its prompt and gold trace in a
:class:`~agentguard.bench.simplified.vocab.Vocab`, so the diverse-tool split only
changes names.

This module is the table (name, structure, tools, variants); each pattern's gold run
and prompt are in :mod:`.patterns`, the recorder and phrasing they use in :mod:`.writing`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agentguard.bench.simplified import patterns as P
from agentguard.bench.simplified.writing import Prompt, Sim


@dataclass(frozen=True, slots=True)
class SimplifiedTemplate:
    """One simplified pattern; ``transform`` is True for the a/c templates."""

    name: str
    structure: str
    tools: tuple[str, ...]
    simulate: Sim
    prompt: Prompt
    transform: bool = False
    held_out: bool = False
    alternatives: tuple[tuple[str, str], ...] = (("tool_b", "tool_c"),)


_ABC = ("tool_a", "tool_b", "tool_c")
_ABCD = ("tool_a", "tool_b", "tool_c", "tool_d")

SIMPLIFIED_TEMPLATES: Mapping[str, SimplifiedTemplate] = {
    t.name: t
    for t in (
        SimplifiedTemplate(
            "three_call_branch_bridge",
            "a -> branch(b | c) -> c",
            _ABC,
            P.bridge_gold,
            P.bridge_prompt,
        ),
        SimplifiedTemplate(
            "chain_then_branch", "a -> b -> branch(c | b) -> c", _ABC, P.chain_gold, P.chain_prompt
        ),
        SimplifiedTemplate(
            "rebranch_after_c",
            "a -> c -> branch(b | c) -> b",
            _ABC,
            P.rebranch_gold,
            P.rebranch_prompt,
        ),
        SimplifiedTemplate(
            "join_then_branch",
            "a; b and c from a; join with b; branch(c | b)",
            _ABC,
            P.join_gold,
            P.join_prompt,
        ),
        SimplifiedTemplate(
            "dual_branch_merge",
            "a; left and right branches; merge with b",
            _ABC,
            P.dual_gold,
            P.dual_prompt,
        ),
        SimplifiedTemplate(
            "loop2_then_branch",
            "a -> b(i,1), b(i,2) -> b -> branch(c | b)",
            _ABC,
            P.loop2_gold,
            P.loop2_prompt,
        ),
        SimplifiedTemplate(
            "branch_verify_finalize",
            "a -> branch(c | b) -> b -> branch(c | b)",
            _ABC,
            P.verify_gold,
            P.verify_prompt,
        ),
        SimplifiedTemplate(
            "six_call_double_rebranch",
            "a -> b -> branch(c | b) -> b -> branch(c | b) -> c",
            _ABC,
            P.six_gold,
            P.six_prompt,
        ),
        SimplifiedTemplate(
            "fan_out_fan_in",
            "k x a -> per-item branch(c | b) -> d",
            _ABCD,
            P.fan_gold,
            P.fan_prompt,
        ),
        SimplifiedTemplate(
            "forall_processing",
            "k x a -> per-item b -> d",
            ("tool_a", "tool_b", "tool_d"),
            P.forall_gold,
            P.forall_prompt,
            alternatives=(),
        ),
        SimplifiedTemplate(
            "exists_selection",
            "2 x a -> per-item b -> c on qualifiers -> d",
            _ABCD,
            P.exists_gold,
            P.exists_prompt,
            alternatives=(),
        ),
        SimplifiedTemplate(
            "nested_loops_fixed_2x2",
            "2 transforms -> 2x2 b grid -> d",
            ("tool_a", "tool_c", "tool_b", "tool_d"),
            P.grid_gold,
            P.grid_prompt,
            transform=True,
            alternatives=(),
        ),
        SimplifiedTemplate(
            "filter_then_process",
            "2 transforms -> 2 b -> c on qualifiers -> d",
            ("tool_a", "tool_c", "tool_b", "tool_d"),
            P.filter_gold,
            P.filter_prompt,
            transform=True,
            alternatives=(),
        ),
        SimplifiedTemplate(
            "fanout_then_transform",
            "2 transforms -> per-item branch(c | b) -> per-item b -> d",
            ("tool_a", "tool_c", "tool_b", "tool_d"),
            P.fan_transform_gold,
            P.fan_transform_prompt,
            transform=True,
        ),
        SimplifiedTemplate(
            "branch_then_reprocess",
            "transform -> branch(c | b) -> b -> branch(c | b) -> d",
            ("tool_a", "tool_c", "tool_b", "tool_d"),
            P.reprocess_gold,
            P.reprocess_prompt,
            transform=True,
        ),
        SimplifiedTemplate(
            "loop_termination",
            "while total < target: a(i)",
            ("tool_a",),
            P.loop_gold,
            P.loop_prompt,
            held_out=True,
            alternatives=(),
        ),
        SimplifiedTemplate(
            "branch_selection",
            "K x (a -> branch(c | b))",
            _ABC,
            P.select_gold,
            P.select_prompt,
            held_out=True,
        ),
    )
}
"""All 17 simplified templates: 15 for training, then the 2 held-out patterns."""

TRAINING_TEMPLATES: tuple[str, ...] = tuple(
    n for n, t in SIMPLIFIED_TEMPLATES.items() if not t.held_out
)
HELD_OUT_TEMPLATES: tuple[str, ...] = tuple(
    n for n, t in SIMPLIFIED_TEMPLATES.items() if t.held_out
)


__all__ = [
    "HELD_OUT_TEMPLATES",
    "SIMPLIFIED_TEMPLATES",
    "TRAINING_TEMPLATES",
    "SimplifiedTemplate",
]
