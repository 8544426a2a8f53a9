"""agentguard.monitor."""
