"""The chaos soak (`scoreline soak`): the real stack under load while a seeded schedule breaks it.

- `model`: the contracts between the parts (targets, violations, check results).
- `schedule`: the seeded fault plan (pure).
- `stack`: the processes (two workers, two APIs, the services), kept running through the faults.
- `faults`: what each planned fault does to the stack.
- `desks`, `devices`, `screens`, `partners`: the load, each recording what it sent and saw.
- `provider_check`: the provider matches' outcome in Postgres against the recordings' expectations.
- `report`: the table and the last line.
- `run`: one soak from start to verdict.
"""
