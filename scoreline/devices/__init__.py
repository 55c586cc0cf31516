"""Devices that follow fixtures and show Live Activities: their API secrets and their rows."""
