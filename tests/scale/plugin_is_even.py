"""A plugin module for --load / worker tests: registers ``is_even`` in the default registry."""

from __future__ import annotations

from agentguard import register_predicate

register_predicate("is_even", lambda x: isinstance(x, int) and x % 2 == 0, arity=1)
