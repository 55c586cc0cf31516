"""Live screens: every committed change, pushed to SSE and WebSocket clients within a moment.

The process's outbox listener (`scoreline.outbox`) wakes the `hub`, which loads each change once
(`changes`) and offers it to every connection that follows the match (`subscriber`); each
connection keeps its own versions so it never sends a change twice or leaves a gap (`tracking`).
`relay` shares the changes with the other API processes through Redis pub/sub, `runtime` starts
and stops it all with the app, and `sse` / `ws` speak the two wire protocols.
"""
