"""Signup: accounts for a small SaaS product."""

__version__ = "0.1.0"
