"""Helpers for testing your own specs and guarded agents.

* :func:`capture_firewall` captures every firewall decision and log event in a block,
  like structlog's ``capture_logs``.
* :func:`call`, :func:`if_observed` write scripts for the scripted models that drive a
  real agent without a model service: ``agentguard.testing.smolagents_models.ScriptedModel``
  and ``agentguard.testing.langchain_models.ScriptedChatModel`` (imported from their own
  modules, so that this package needs neither framework).
"""

from agentguard.testing.capture import Captured, capture_firewall
from agentguard.testing.script import (
    Reaction,
    ScriptedCall,
    ScriptExhaustedError,
    call,
    call_with_id,
    if_observed,
)

__all__ = [
    "Captured",
    "Reaction",
    "ScriptExhaustedError",
    "ScriptedCall",
    "call",
    "call_with_id",
    "capture_firewall",
    "if_observed",
]
