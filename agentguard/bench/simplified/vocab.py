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
        ("fetch_account_tier", {"i": "account_no"}),
        ("read_vital_sign", {"i": "bed_number"}),
        ("check_node_health", {"i": "host_index"}),
        ("sample_feature", {"i": "column_index"}),
        ("scan_parcel", {"i": "parcel_no"}),
        ("poll_thermostat", {"i": "device_no"}),
        ("sequence_read", {"i": "read_id"}),
        ("cite_statute", {"i": "statute_no"}),
        ("rate_credit_line", {"i": "line_no"}),
        ("triage_level", {"i": "case_no"}),
        ("get_build_status", {"i": "build_no"}),
        ("bucket_quantile", {"i": "quantile_no"}),
        ("grade_ticket", {"i": "ticket_no"}),
    ),
    "tool_a_list": (
        ("list_transaction_ids", {"seed": "batch_seed"}),
        ("list_admissions", {"seed": "ward_seed"}),
        ("list_pods", {"seed": "cluster_seed"}),
        ("list_samples", {"seed": "cohort_seed"}),
        ("list_shipments", {"seed": "route_seed"}),
        ("list_devices", {"seed": "fleet_seed"}),
        ("list_variants", {"seed": "genome_seed"}),
        ("list_filings", {"seed": "docket_seed"}),
    ),
    "tool_iterations": (
        ("compute_retry_budget", {"seed": "execution_seed"}),
        ("count_dosing_rounds", {"seed": "regimen_seed"}),
        ("plan_rollout_waves", {"seed": "deploy_seed"}),
        ("choose_epoch_count", {"seed": "training_seed"}),
        ("count_delivery_legs", {"seed": "itinerary_seed"}),
        ("count_polling_cycles", {"seed": "gateway_seed"}),
        ("count_alignment_passes", {"seed": "assembly_seed"}),
        ("count_review_rounds", {"seed": "matter_seed"}),
    ),
    "tool_b": (
        ("cross_reference", {"i": "primary_id", "j": "secondary_id"}),
        ("correlate_signals", {"i": "channel_a", "j": "channel_b"}),
        ("match_clauses", {"i": "clause_id", "j": "contract_id"}),
        ("route_shipment", {"i": "origin", "j": "destination"}),
        ("reconcile_ledgers", {"i": "ledger_a", "j": "ledger_b"}),
        ("pair_lab_results", {"i": "panel_id", "j": "visit_id"}),
        ("join_metrics", {"i": "service_id", "j": "window_id"}),
        ("score_interaction", {"i": "feature_a", "j": "feature_b"}),
        ("price_lane", {"i": "depot_id", "j": "zone_id"}),
        ("link_sensors", {"i": "sensor_a", "j": "sensor_b"}),
        ("align_reads", {"i": "read_a", "j": "read_b"}),
        ("compare_precedents", {"i": "case_a", "j": "case_b"}),
        ("hedge_position", {"i": "asset_id", "j": "tenor"}),
        ("map_dependency", {"i": "module_id", "j": "version_id"}),
        ("match_donor", {"i": "donor_id", "j": "recipient_id"}),
    ),
    "tool_c": (
        ("transform_value", {"x": "value"}),
        ("normalize_reading", {"x": "reading"}),
        ("scale_dosage", {"x": "dose"}),
        ("adjust_price", {"x": "price"}),
        ("convert_currency", {"x": "amount"}),
        ("calibrate_signal", {"x": "signal"}),
        ("rescale_latency", {"x": "latency"}),
        ("standardize_score", {"x": "score"}),
        ("estimate_freight", {"x": "weight"}),
        ("smooth_telemetry", {"x": "sample"}),
        ("translate_codon", {"x": "codon"}),
        ("assess_penalty", {"x": "fine"}),
        ("apply_interest", {"x": "principal"}),
        ("weight_severity", {"x": "severity"}),
        ("inflate_quota", {"x": "quota"}),
        ("project_growth", {"x": "baseline"}),
    ),
    "tool_d": (
        ("aggregate_metrics", {"numbers": "metrics"}),
        ("accumulate_readings", {"numbers": "readings"}),
        ("sum_invoices", {"numbers": "amounts"}),
        ("total_counts", {"numbers": "counts"}),
        ("sum_balances", {"numbers": "balances"}),
        ("total_doses", {"numbers": "doses"}),
        ("sum_error_budgets", {"numbers": "budgets"}),
        ("pool_estimates", {"numbers": "estimates"}),
        ("total_cargo", {"numbers": "loads"}),
        ("sum_energy_use", {"numbers": "meters"}),
        ("count_coverage", {"numbers": "depths"}),
        ("total_damages", {"numbers": "awards"}),
        ("net_cash_flows", {"numbers": "flows"}),
        ("sum_bed_days", {"numbers": "stays"}),
        ("total_cpu_hours", {"numbers": "usages"}),
    ),
    "tool_expand": (
        ("explore_dependencies", {"node": "package_id"}),
        ("expand_referrals", {"node": "provider_id"}),
        ("trace_call_graph", {"node": "service_node"}),
        ("expand_lineage", {"node": "dataset_id"}),
        ("expand_route_network", {"node": "hub_id"}),
        ("discover_mesh_peers", {"node": "peer_id"}),
        ("expand_pathway", {"node": "gene_id"}),
        ("expand_citations", {"node": "opinion_id"}),
        ("expand_ownership", {"node": "entity_id"}),
        ("expand_contacts", {"node": "patient_node"}),
        ("expand_subnets", {"node": "subnet_id"}),
        ("expand_feature_tree", {"node": "split_id"}),
        ("expand_supply_chain", {"node": "supplier_id"}),
        ("expand_topology", {"node": "router_id"}),
        ("expand_family_tree", {"node": "member_id"}),
    ),
    "tool_value": (
        ("get_node_weight", {"node": "node_id"}),
        ("score_package", {"node": "package_ref"}),
        ("rate_provider", {"node": "provider_ref"}),
        ("measure_service", {"node": "service_ref"}),
        ("value_dataset", {"node": "dataset_ref"}),
        ("rank_hub", {"node": "hub_ref"}),
        ("score_peer", {"node": "peer_ref"}),
        ("weigh_gene", {"node": "gene_ref"}),
        ("rank_opinion", {"node": "opinion_ref"}),
        ("value_entity", {"node": "entity_ref"}),
    ),
}
"""Table 14's pool sizes: tool_a 17, tool_a_list 8, tool_iterations 8, tool_b 15,
tool_c 16, tool_d 15, tool_expand 15, tool_value 10 (the table says >= 10). The first
alias of each tool is Table 14's example; the others are ours, across its domains
(finance, healthcare, DevOps, data science, logistics, IoT, genomics, legal). Every
shown name is distinct across the whole pool."""

ALIAS_POOL_SIZES: Mapping[str, int] = {t: len(aliases) for t, aliases in ALIAS_POOL.items()}


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
