"""The agents whose session files are recognized but not processed yet: one module each.

Each module declares the agent's `Signature` (its positive identification). A file one of them
names is reported `unsupported-format` naming that agent, and never read as another agent's.
"""
