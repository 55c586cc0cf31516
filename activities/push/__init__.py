"""The Live Activity sender: payloads and pacing (pure), the APNs HTTP/2 client, and the fan-out activity.

Nothing is imported here, so a workflow can import the pure modules (`pacing`, `payloads`) without
pulling in the network and database parts.
"""
