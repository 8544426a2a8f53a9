"""agentguard.enforcement."""
