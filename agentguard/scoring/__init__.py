"""agentguard.scoring."""
