"""Billing: subscriptions driven by payment-provider webhooks."""

__version__ = "0.1.0"
