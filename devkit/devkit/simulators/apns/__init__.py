"""A local stand-in for Apple's push service (APNs) that the dev stack and tests talk to.

It speaks the real wire protocol (HTTP/2 over TLS, provider JWTs, Apple's status codes and reason
strings) so the Scoreline sender runs unmodified against it; a plain-HTTP admin side shows what was
received and injects failures. Entry points live in `server`.
"""
