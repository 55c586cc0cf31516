"""Temporal plumbing shared by the API, the worker and the CLI: client connection and trace propagation."""
