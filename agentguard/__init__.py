"""agentguard: a runtime firewall and trace verifier for tool-calling LLM agents."""
