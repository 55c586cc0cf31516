"""Scoreline's development kit: the simulators, the dev stack, the chaos soak and their commands.

Never installed in production: the service's wheel and image leave it out, and nothing in the
service imports it (import-linter's contract in the root pyproject.toml).
"""
