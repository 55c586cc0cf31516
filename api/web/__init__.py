"""The scorer desk and the operator console: static web apps the API serves on its own origin."""
