"""Trialist: free trials and subscription billing."""

__version__ = "0.1.0"
