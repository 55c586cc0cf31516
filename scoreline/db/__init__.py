"""Postgres: the schema (SQLAlchemy Core tables) and connection helpers shared by activities and the API."""
