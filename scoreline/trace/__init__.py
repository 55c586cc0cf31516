"""`scoreline trace`: everything one change did, in time order, from its trace id.

Every row a change writes (`command`, `timeline_item`, `domain_event`, `push_attempt`, and the
`published_document` versions whose rebuild gathered it) and every log line it caused carries its
trace id (`scoreline.tracing`). This package reads them back and merges them into one timeline:

- `models`: the timeline's items and what a trace id looks like;
- `rows`: the rows, from Postgres in one snapshot;
- `logs`: the JSON log lines, streamed from the processes' log files;
- `timeline`: the merge, in time order;
- `render`: the readable table and the JSON.
"""
