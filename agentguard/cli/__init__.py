"""agentguard.cli."""
