"""Reminders: tell trial users their trial is about to end."""

__version__ = "0.1.0"
