"""Real MCP servers the gateway tests put agentguard in front of (run as subprocesses)."""
