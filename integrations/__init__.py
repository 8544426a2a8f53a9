"""Framework adapters, imported as ``agentguard.integrations.<framework>``.

Each adapter depends on the core and imports its framework lazily; the core never
imports anything from here.
"""
