"""SportMonks Cricket API v2: the strict raw models, the status table and the pure normaliser.

Cricket v2 is a different API from Football v3 (other base URL, ids, includes and shapes), so it
has its own package; what it produces is the same domain `Snapshot`, with `sport = cricket`.
"""
