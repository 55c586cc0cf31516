"""A SportMonks Football v3 look-alike that replays recordings on a clock, with injectable faults.

Entry points: `config.ProviderSimConfig`, `app.create_app` (the ASGI app) and `server.run`
(uvicorn until SIGINT/SIGTERM). `/_sim/*` moves the clock, injects faults and counts requests.
"""
