"""A SportMonks look-alike that replays recordings on a clock, with injectable faults.

Football recordings are served as Football v3 (`/v3/football/...`), cricket recordings
(`"sport": "cricket"`) as Cricket v2 (`/api/v2.0/livescores`, `fixtures/{id}`, `fixtures`,
`scores`; see `cricket/`), both from one process. Recordings may be gzip-compressed
(`NAME.jsonl.gz`). Faults and `/_sim/stats` name football endpoints by their route below
`/v3/football` (`livescores/inplay`) and cricket ones by theirs below `/api/v2.0` with `cricket/` in
front (`cricket/livescores`, `cricket/fixtures/{id}`, `cricket/fixtures`, `cricket/scores`,
`cricket/scores/{id}`); see `endpoints.py`.

Entry points: `config.ProviderSimConfig`, `app.create_app` (the ASGI app) and `server.run`
(uvicorn until SIGINT/SIGTERM). `/_sim/*` moves the clock, injects faults and counts requests.
"""
