"""Tool-name aliases (AgentLTL Appendix D.4): the names a model sees for the base tools.

A :class:`Vocab` maps each base tool (``tool_a`` …) to a shown name and its argument
names to shown argument names. The arithmetic is unchanged; gold traces, prompts and
constraints are all written in the shown names, so compliance is invariant under
renaming.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentguard.bench.errors import BadParameterError


@dataclass(frozen=True, slots=True)
class Vocab:
    """Shown names: ``tools[base] -> alias`` and ``args[base][arg] -> alias arg``."""

    tools: Mapping[str, str] = field(default_factory=dict)
    args: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def t(self, base: str) -> str:
        return self.tools.get(base, base)

    def a(self, base: str, arg: str) -> str:
        return self.args.get(base, {}).get(arg, arg)

    def to_aliases(self) -> dict[str, dict[str, Any]]:
        """``{shown: {"tool": base, "args": {shown_arg: base_arg}}}`` for renamed tools."""
        return {
            alias: {"tool": base, "args": {v: k for k, v in self.args.get(base, {}).items()}}
            for base, alias in self.tools.items()
            if alias != base or self.args.get(base)
        }


IDENTITY = Vocab()

ALIAS_POOL: Mapping[str, tuple[tuple[str, Mapping[str, str]], ...]] = {
    "tool_a": (
        ("verify_checksum", {"i": "index"}),
        ("enumerate_patients", {"i": "intake_seed"}),
        ("probe_sensor", {"i": "sensor_id"}),
        ("lookup_gene", {"i": "locus"}),
    ),
    "tool_b": (
        ("cross_reference", {"i": "primary_id", "j": "secondary_id"}),
        ("correlate_signals", {"i": "channel_a", "j": "channel_b"}),
        ("match_clauses", {"i": "clause_id", "j": "contract_id"}),
        ("route_shipment", {"i": "origin", "j": "destination"}),
    ),
    "tool_c": (
        ("transform_value", {"x": "value"}),
        ("normalize_reading", {"x": "reading"}),
        ("scale_dosage", {"x": "dose"}),
        ("adjust_price", {"x": "price"}),
    ),
    "tool_d": (
        ("aggregate_metrics", {"numbers": "metrics"}),
        ("accumulate_readings", {"numbers": "readings"}),
        ("sum_invoices", {"numbers": "amounts"}),
        ("total_counts", {"numbers": "counts"}),
    ),
    "tool_a_list": (("list_transaction_ids", {"seed": "batch_seed"}),),
    "tool_iterations": (("compute_retry_budget", {"seed": "execution_seed"}),),
    "tool_expand": (("explore_dependencies", {"node": "package_id"}),),
    "tool_value": (("get_node_weight", {"node": "node_id"}),),
}
"""A small alias pool per base tool (Table 14 gives the pool sizes of the paper's; this
pool holds its examples plus a few more, not the full 8-17 aliases per tool)."""


def random_vocab(seed: int, tools: tuple[str, ...]) -> Vocab:
    """A deterministic alias choice for ``tools`` (distinct shown names)."""
    rng = random.Random(seed)
    names: dict[str, str] = {}
    args: dict[str, Mapping[str, str]] = {}
    for base in tools:
        if base not in ALIAS_POOL:
            raise BadParameterError(f"no aliases for tool {base!r}")
        alias, renames = rng.choice(ALIAS_POOL[base])
        names[base] = alias
        args[base] = dict(renames)
    return Vocab(names, args)
