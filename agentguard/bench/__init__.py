"""The procedural benchmark of AgentLTL Section 4: tools, templates, instances, layered
specs, trace grounding, the compliance reward, and runs under enforcement settings.

Start with :func:`generate_instance` (one instance), :func:`generate_suite` (the paper's
grid), :func:`run_benchmark` (an agent under baseline / block-and-warn / soft-block)
and :func:`make_grpo_reward` (a TRL reward function) with :func:`grpo_environments` /
:func:`grpo_rows` (GRPO rollouts that execute the instance's tools); a trained chat model
runs held out as :class:`ChatModelAgent` (docs/training.md).
"""

from __future__ import annotations

from agentguard.bench.chat_agent import ChatModelAgent, chat_model_factory
from agentguard.bench.environment import BenchEnvironment, grpo_environments, grpo_rows
from agentguard.bench.generate import (
    MAX_CALLS,
    PAPER_SEEDS,
    generate_instance,
    generate_suite,
    instance_constraints,
    instance_spec_text,
)
from agentguard.bench.instance import GoldCall, Instance
from agentguard.bench.mutations import MUTATION_KINDS, Mutation, mutations
from agentguard.bench.reward import (
    RewardWeights,
    answer_format,
    compliance_reward,
    make_grpo_reward,
    shaped_accuracy,
    trace_distance,
)
from agentguard.bench.runner import SETTINGS, run_benchmark, run_instance
from agentguard.bench.synthesis import LAYER_WEIGHTS, synthesize
from agentguard.bench.templates import TEMPLATE_NAMES, TEMPLATES
from agentguard.bench.tools import TOOL_INFOS, TOOL_NAMES, Toolbox, python_tools
from agentguard.semantics.entities import extract_entities
from agentguard.semantics.grounding import grounding
from agentguard.semantics.registry import register_grounding

__all__ = [
    "LAYER_WEIGHTS",
    "MAX_CALLS",
    "MUTATION_KINDS",
    "PAPER_SEEDS",
    "SETTINGS",
    "TEMPLATES",
    "TEMPLATE_NAMES",
    "TOOL_INFOS",
    "TOOL_NAMES",
    "BenchEnvironment",
    "ChatModelAgent",
    "GoldCall",
    "Instance",
    "Mutation",
    "RewardWeights",
    "Toolbox",
    "answer_format",
    "chat_model_factory",
    "compliance_reward",
    "extract_entities",
    "generate_instance",
    "generate_suite",
    "grounding",
    "grpo_environments",
    "grpo_rows",
    "instance_constraints",
    "instance_spec_text",
    "make_grpo_reward",
    "mutations",
    "python_tools",
    "register_grounding",
    "run_benchmark",
    "run_instance",
    "shaped_accuracy",
    "synthesize",
    "trace_distance",
]
