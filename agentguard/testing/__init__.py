"""Helpers for testing your own specs and guarded agents.

* :func:`capture_firewall` captures every firewall decision and log event in a block,
  like structlog's ``capture_logs``.
* :func:`call`, :func:`if_observed` write scripts for the scripted models that drive a
  real agent without a model service: ``agentguard.testing.smolagents_models.ScriptedModel``,
  ``agentguard.testing.langchain_models.ScriptedChatModel`` and
  ``agentguard.testing.openai_agents_models.ScriptedAgentsModel`` (imported from their own
  modules, so that this package needs no framework). All three step through their script
  with a :class:`ScriptPlayer`, which a scripted model for another framework can reuse.
* ``agentguard.testing.refund_desk`` and ``agentguard.testing.printout``: the tools, the
  model's script and the printing that the runnable examples (``examples/``) share.
"""

from agentguard.testing.capture import Captured, capture_firewall
from agentguard.testing.script import (
    Reaction,
    ScriptedCall,
    ScriptExhaustedError,
    ScriptPlayer,
    call,
    call_with_id,
    if_observed,
)

__all__ = [
    "Captured",
    "Reaction",
    "ScriptExhaustedError",
    "ScriptPlayer",
    "ScriptedCall",
    "call",
    "call_with_id",
    "capture_firewall",
    "if_observed",
]
