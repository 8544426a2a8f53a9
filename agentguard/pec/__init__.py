"""agentguard.pec."""
