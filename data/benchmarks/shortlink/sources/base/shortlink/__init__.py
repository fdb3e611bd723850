"""Shortlink: a rate-limited URL shortener."""

__version__ = "0.1.0"
