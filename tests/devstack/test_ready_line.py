"""The ready line never shows a password; `<data-dir>/env` keeps the real URLs, readable only by us."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from devkit.devstack.envfile import read_env_file, write_env_file
from devkit.devstack.monitoring import MonitoringBinaries
from devkit.devstack.stack import DevOptions, DevStack, Ports, without_password
from scoreline.settings import Settings

READY_KEYS = [
    "api",
    "temporal",
    "temporal-ui",
    "provider",
    "apns",
    "apns-admin",
    "postgres",
    "redis",
    "api-metrics",
    "worker-metrics",
    "feeds-metrics",
]
PORTS = Ports(
    api=8000,
    temporal=7233,
    temporal_ui=8233,
    provider=8100,
    apns=8443,
    apns_admin=8444,
    postgres=5432,
    redis=6379,
    worker_metrics=9464,
    feeds_metrics=9465,
    prometheus=9090,
    alertmanager=9093,
)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://postgres:s3cr%40t@127.0.0.1:5432/scoreline",
            "postgresql://postgres:***@127.0.0.1:5432/scoreline",
        ),
        (
            "postgresql://scoreline:pw@db:5432/x?sslmode=require",
            "postgresql://scoreline:***@db:5432/x?sslmode=require",
        ),
        ("redis://:hunter2@cache:6379/0", "redis://:***@cache:6379/0"),
        ("postgresql://postgres@127.0.0.1:5432/scoreline", "postgresql://postgres@127.0.0.1:5432/scoreline"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("127.0.0.1:7233", "127.0.0.1:7233"),
    ],
)
def test_without_password_hides_only_the_password(url: str, shown: str) -> None:
    """The user, host, port, database and query stay; only the password becomes `***`."""
    assert without_password(url) == shown


def test_ready_line_masks_the_database_password_and_keeps_its_format(tmp_path: Path) -> None:
    """Regression: `scoreline dev` printed DATABASE_URL with its password on the ready line; now the
    line shows `***` in its place, with every key in the documented order. Fails on main before the fix."""
    stack = DevStack(DevOptions(data_dir=tmp_path), Settings(), monitoring=None)
    database_url = "postgresql://postgres:s3cret@127.0.0.1:5432/scoreline"
    stack._set_addresses(PORTS, database_url, "redis://:hunter2@127.0.0.1:6379/0", "127.0.0.1:7233")

    line = stack.ready_line()

    assert "s3cret" not in line and "hunter2" not in line
    words = line.split()
    assert words[0] == "ready"
    pairs = dict(word.split("=", 1) for word in words[1:])
    assert list(pairs) == READY_KEYS
    assert pairs["postgres"] == "postgresql://postgres:***@127.0.0.1:5432/scoreline"
    assert pairs["redis"] == "redis://:***@127.0.0.1:6379/0"
    assert pairs["api"] == "http://127.0.0.1:8000"
    assert pairs["worker-metrics"] == "http://127.0.0.1:9464/metrics"
    # Other parts of the dev stack (the demo desk) still reach Postgres with the real URL.
    assert stack.addresses["postgres"] == database_url


def test_ready_line_names_prometheus_and_alertmanager_when_they_run(tmp_path: Path) -> None:
    """With both binaries found, the line ends with their addresses, and the API is told where
    Alertmanager is (for `GET /v1/ops/alerts`)."""
    binaries = MonitoringBinaries(prometheus=Path("/usr/bin/prometheus"), alertmanager=Path("/usr/bin/am"))
    stack = DevStack(DevOptions(data_dir=tmp_path), Settings(), monitoring=binaries)
    stack._set_addresses(
        PORTS, "postgresql://p@127.0.0.1:5432/s", "redis://127.0.0.1:6379/0", "127.0.0.1:7233"
    )

    pairs = dict(word.split("=", 1) for word in stack.ready_line().split()[1:])

    assert list(pairs) == [*READY_KEYS, "prometheus", "alertmanager"]
    assert pairs["prometheus"] == "http://127.0.0.1:9090"
    assert stack.child_env["ALERTMANAGER_URL"] == "http://127.0.0.1:9093"


def test_env_file_keeps_the_real_url_and_is_private(tmp_path: Path) -> None:
    """Regression: `<data-dir>/env` (which holds DATABASE_URL's password and the provider token) was
    written with the umask's mode, typically world-readable; now it is 0600. Fails on main before the fix."""
    path = tmp_path / "data" / "env"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "env.tmp").write_text("stale\n")
    (tmp_path / "data" / "env.tmp").chmod(0o644)
    database_url = "postgresql://postgres:s3cret@127.0.0.1:5432/scoreline"

    write_env_file(path, {"DATABASE_URL": database_url, "PROVIDER_TOKEN": "tok"})

    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_env_file(path) == {"DATABASE_URL": database_url, "PROVIDER_TOKEN": "tok"}
    write_env_file(path, {"DATABASE_URL": database_url})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_env_file(path) == {"DATABASE_URL": database_url}
