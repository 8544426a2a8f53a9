"""``agentguard demo``: a scripted support agent issuing refunds, guarded and unguarded.

Runs offline with no key: the model is :class:`agentguard.testing.smolagents_models.ScriptedModel`.
The spec it enforces ships as package data (``agentguard/demo/refund.ltl``).
"""
