"""The typed options record stays in step with the Firewall's keyword options."""

from __future__ import annotations

import inspect

from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.options import FirewallOptions
from agentguard.guard import GuardOptions, GuardSession


def test_firewall_options_name_every_firewall_keyword() -> None:
    """FirewallOptions has exactly the keyword-only parameters of Firewall.__init__."""
    params = inspect.signature(Firewall.__init__).parameters.values()
    keywords = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert set(FirewallOptions.__annotations__) == keywords


def test_guard_options_add_the_sessions_own() -> None:
    """GuardOptions = FirewallOptions + GuardSession's own keyword parameters."""
    params = inspect.signature(GuardSession.__init__).parameters.values()
    own = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert set(GuardOptions.__annotations__) == own | set(FirewallOptions.__annotations__)
