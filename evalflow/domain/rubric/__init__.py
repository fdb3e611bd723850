"""River Review's multi-dimensional rubric (SPEC §3): rubric and ledger-entry models, weighted
totals with direction correction, ledger comparison and review-fixture evaluation.

Everything here is pure; file and process I/O lives in `evalflow.io.ledger` and
`evalflow.io.review`.
"""
