"""The journal file: every record, beyond the in-memory 10,000, on a real simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from devkit.simulators.apns.config import ApnsSimConfig
from devkit.simulators.apns.journal import Journal, PushRecord
from devkit.simulators.apns.journal_file import JournalFile
from devkit.simulators.apns.keys import ensure_signing_key, ensure_tls_certificate
from tests.apns_sim.conftest import (
    LIVE_ACTIVITY_SUFFIX,
    client_tls,
    device_token,
    la_start,
    la_update,
    provider_token,
    running_simulator,
    sim_config,
)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def la_headers(config: ApnsSimConfig, jwt: str) -> dict[str, str]:
    return {
        "authorization": f"bearer {jwt}",
        "apns-topic": config.topic + LIVE_ACTIVITY_SUFFIX,
        "apns-push-type": "liveactivity",
        "apns-priority": "10",
    }


async def test_every_push_and_unregister_is_a_line_in_order(tmp_path: Path) -> None:
    """Answered pushes and unregisters land in the file in order, whole and flushed while the
    simulator runs, with the fields a check reads; clearing the admin journal leaves the file."""
    path = tmp_path / "journal" / "apns.jsonl"
    config = sim_config(tmp_path / "sim", journal_file=path)
    live, dead = device_token(), device_token()
    async with running_simulator(config):
        p8_path, _ = ensure_signing_key(config.data_dir, config.key_id)
        cert_path, _ = ensure_tls_certificate(config.data_dir, config.host)
        headers = la_headers(config, provider_token(config, p8_path.read_text()))
        base = f"https://localhost:{config.port}"
        async with (
            httpx.AsyncClient(http2=True, verify=client_tls(cert_path), base_url=base) as apns,
            httpx.AsyncClient(base_url=f"http://{config.host}:{config.admin_port}") as admin,
        ):
            await apns.post(f"/3/device/{live}", json=la_start(), headers=headers)
            await apns.post(f"/3/device/{dead}", json=la_update(), headers=headers)
            (await admin.post("/_sim/unregister", json={"token": dead})).raise_for_status()
            (await admin.delete("/_sim/pushes")).raise_for_status()
            await apns.post(f"/3/device/{dead}", json=la_update(), headers={**headers, "apns-priority": "5"})
            written = lines(path)

    assert [line["kind"] for line in written] == ["push", "push", "unregister", "push"]
    start, before, unregister, after = written
    assert (start["seq"], start["token"], start["status"]) == (1, live, 200)
    assert start["payload"]["aps"]["event"] == "start"
    assert (start["push_type"], start["priority"], start["dropped_by_device"]) == ("liveactivity", "10", None)
    assert start["apns_id"] and start["received_at"] and start["fault_id"] is None
    assert (before["seq"], before["status"]) == (2, 200)
    assert (unregister["token"], unregister["after_seq"]) == (dead, 2)
    assert (after["seq"], after["status"], after["reason"], after["priority"]) == (
        3,
        410,
        "Unregistered",
        "5",
    )
    assert "jwt" not in start and "headers" not in start


async def test_the_file_keeps_what_the_bounded_journal_forgets(tmp_path: Path) -> None:
    """The file holds every record, appended across restarts; the in-memory journal only its newest."""
    path = tmp_path / "apns.jsonl"
    config = sim_config(tmp_path / "sim", journal_file=path)
    for _ in range(2):
        async with running_simulator(config):
            p8_path, _ = ensure_signing_key(config.data_dir, config.key_id)
            cert_path, _ = ensure_tls_certificate(config.data_dir, config.host)
            headers = la_headers(config, provider_token(config, p8_path.read_text()))
            base = f"https://localhost:{config.port}"
            async with httpx.AsyncClient(http2=True, verify=client_tls(cert_path), base_url=base) as apns:
                for _ in range(3):
                    await apns.post(f"/3/device/{device_token()}", json=la_update(), headers=headers)

    assert [line["seq"] for line in lines(path)] == [1, 2, 3, 1, 2, 3]


def test_a_small_journal_still_writes_everything(tmp_path: Path) -> None:
    """Eviction from the bounded deque never reaches the file."""
    file = JournalFile(tmp_path / "apns.jsonl")
    journal = Journal(capacity=2, file=file)
    for _ in range(5):
        journal.record(record(journal.next_seq()))
    file.close()

    assert len(journal.pushes(limit=100)) == 2
    assert [line["seq"] for line in lines(tmp_path / "apns.jsonl")] == [1, 2, 3, 4, 5]


def record(seq: int) -> PushRecord:
    return PushRecord(
        seq=seq,
        received_at="2026-01-01T00:00:00.000+00:00",
        connection_id=1,
        stream_id=2 * seq - 1,
        method="POST",
        path="/3/device/aa",
        token="aa",
        headers={"apns-push-type": "liveactivity"},
        jwt=None,
        payload=la_update(),
        payload_bytes=100,
        apns_id="00000000-0000-0000-0000-000000000000",
        status=200,
        reason=None,
        dropped_by_device=None,
        fault_id=None,
        latency_ms=0,
    )
