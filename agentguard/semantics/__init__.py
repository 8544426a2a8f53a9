"""Semantics of AgentLTL: values, trace predicates, the evaluator and extension points."""

from agentguard.semantics.evaluator import Evaluator, holds
from agentguard.semantics.registry import Registry, default_registry

__all__ = ["Evaluator", "Registry", "default_registry", "holds"]
