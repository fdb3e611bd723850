"""evalflow: scores spec-driven development frameworks against a PRD's frozen checks."""

__version__ = "0.1.0"
