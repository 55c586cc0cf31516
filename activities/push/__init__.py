"""Live Activity pushes: payloads and APNs' answers (pure), publishing, the drainer, the APNs client.

Nothing is imported here, so a module that needs one part (a workflow importing `publish` for its
activity class) does not pull in the others: the drainer and the APNs client stay out of it.
"""
