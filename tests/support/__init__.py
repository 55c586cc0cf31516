"""Test harness helpers shared by every test package."""
