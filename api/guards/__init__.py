"""ASGI guards: what every route gets refused before a route reads a byte of it (design §6)."""
