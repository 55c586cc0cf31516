"""Soak check fixtures: the push tests' plain connection, for the check's reads of real Postgres."""

# Fixtures, registered by importing them (pytest_plugins is only honoured in the root conftest).
from tests.push.conftest import db  # noqa: F401 - pytest finds fixtures by name
