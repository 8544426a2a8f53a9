"""agentguard.bench."""
