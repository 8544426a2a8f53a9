"""agentguard.semantics."""
