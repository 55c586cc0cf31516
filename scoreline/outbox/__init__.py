"""The `domain_event` outbox, read in commit-safe order and fanned out to in-process consumers.

`reader` is the query (late-commit safe); `listener` is the one LISTEN connection per process that
decides when to run it and hands each consumer what it has not seen yet.
"""
