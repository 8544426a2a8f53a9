"""agentguard.testing."""
