"""The worker's and feed builder's exporter, in a process of its own (one Temporal Runtime per process)."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap

from prometheus_client.parser import text_string_to_metric_families

from devkit.devstack.ports import free_port

SCRIPT = textwrap.dedent(
    """
    import sys, time, urllib.request
    from scoreline.logging import configure_logging
    from scoreline.metrics.exporter import leave_now, start_exporter
    from scoreline.metrics.instruments import metrics

    configure_logging("info", "json")
    address = sys.argv[1]
    runtime = start_exporter("scoreline-worker", address)
    metrics().budget.set(2000)
    metrics().polls.add(3, {"source": "live", "outcome": "ok"})
    if runtime is not None:
        time.sleep(0.3)
        print(urllib.request.urlopen(f"http://{address}/metrics").read().decode())
    print("exporter:", "started" if runtime else "none", flush=True)
    leave_now()
    """
)


def _run(address: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, address], capture_output=True, text=True, timeout=60, check=False
    )


def test_our_series_leave_with_the_sdk_names_in_base_units() -> None:
    done = _run(f"127.0.0.1:{free_port()}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("exporter: started")
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(done.stdout.rsplit("exporter:", 1)[0])
        for sample in family.samples
    }
    assert samples[("scoreline_provider_budget_calls", (("service", "scoreline-worker"),))] == 2000
    polls = (("outcome", "ok"), ("service", "scoreline-worker"), ("source", "live"))
    assert samples[("scoreline_watch_polls_total", polls)] == 3


def test_a_taken_port_leaves_the_process_running_without_metrics_and_says_so() -> None:
    """A worker whose metrics port is taken still works: it logs why, and Prometheus sees it down."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = _run(f"127.0.0.1:{taken.getsockname()[1]}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("exporter: none")
    assert '"event": "metrics.exporter_failed"' in done.stderr
