"""docker-compose.yml cannot run here, so its commands and variables are checked against the code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml

from scoreline.cli import app
from scoreline.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
OURS = {
    name: spec
    for name, spec in SERVICES.items()
    if spec.get("image") in ("scoreline:latest", "scoreline-devkit:latest")
}

# Variables that configure Postgres, Temporal or the UI images, not Scoreline.
THIRD_PARTY_ENV = {
    "POSTGRES_USER",
    "POSTGRES_PASSWORD",
    "POSTGRES_DB",
    "POSTGRES_PWD",
    "POSTGRES_SEEDS",
    "DB",
    "DB_PORT",
}


def _setting_names() -> set[str]:
    names = set()
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias if isinstance(field.validation_alias, str) else None
        names.add((alias or name).upper())
    return names


def test_topology_has_every_part() -> None:
    """Temporal (with its own Postgres), its UI, Postgres, Redis, migrate, api, worker, the feed
    builder, Prometheus and Alertmanager, and the simulators."""
    expected = {
        "postgres",
        "temporal-postgres",
        "redis",
        "temporal",
        "temporal-ui",
        "migrate",
        "api",
        "worker",
        "feeds",
        "prometheus",
        "alertmanager",
    }
    assert expected <= SERVICES.keys()
    assert {"provider-sim", "apns-sim"} <= OURS.keys()
    assert all(SERVICES[name].get("profiles") == ["simulators"] for name in ("provider-sim", "apns-sim"))


def test_api_and_worker_wait_for_the_migration() -> None:
    """The one-shot migrate job completes before the api, the worker and the feed builder start."""
    for name in ("api", "worker", "feeds"):
        assert SERVICES[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}


@pytest.mark.parametrize("service", sorted(OURS))
def test_service_command_is_a_real_entry_point(service: str) -> None:
    """Each of our services runs a `scoreline` subcommand that exists and accepts those options."""
    command = OURS[service]["command"]
    assert command[0] == "scoreline"
    target: Any = typer.main.get_command(app)
    # The image holds the checkout at /app (Dockerfile), so container paths are checked in this one.
    args = [arg.replace("/app/", f"{ROOT}/", 1) if arg.startswith("/app/") else arg for arg in command[1:]]
    while hasattr(target, "list_commands"):
        name = args.pop(0)
        target = target.get_command(
            target.make_context(target.name, [name, "--help"], resilient_parsing=True), name
        )
        assert target is not None, f"{service}: no command {name!r}"
    # Parsing refuses unknown options and bad values, as the container would at start.
    target.make_context(target.name, args)


@pytest.mark.parametrize("service", sorted(OURS))
def test_service_environment_names_real_settings(service: str) -> None:
    """Every variable our services get is a Settings field, so nothing is silently ignored."""
    environment = OURS[service].get("environment", {})
    unknown = set(environment) - _setting_names()
    assert not unknown, f"{service} sets variables Settings does not read: {unknown}"


@pytest.mark.parametrize(
    ("service", "directory", "config"),
    [
        ("prometheus", "ops/prometheus", "/etc/prometheus/prometheus.yml"),
        ("alertmanager", "ops/alertmanager", "/etc/alertmanager/alertmanager.yml"),
    ],
)
def test_alerting_services_read_the_checked_in_config(service: str, directory: str, config: str) -> None:
    """Prometheus and Alertmanager run the files tests/ops checks: their directory is mounted
    read-only where the command's --config.file points, and the file is there in the checkout."""
    spec = SERVICES[service]
    mount_point = config.rsplit("/", 1)[0]
    assert f"./{directory}:{mount_point}:ro" in spec["volumes"]
    assert f"--config.file={config}" in spec["command"]
    assert (ROOT / directory / config.rsplit("/", 1)[1]).is_file()


def test_third_party_services_use_only_their_own_variables() -> None:
    """The environment of the images we do not build is theirs; nothing of ours leaks in by mistake."""
    for name, spec in SERVICES.items():
        if name in OURS or name in ("temporal-ui",):
            continue
        assert set(spec.get("environment", {})) <= THIRD_PARTY_ENV, name
