"""`scoreline dev`: the whole system on one machine, as supervised child processes, no Docker."""
