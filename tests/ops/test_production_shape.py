"""The production topology (docker-compose.yml, the image's build context, the processes' start-up)
exposes nothing but the API: issue 33, item 7. Nothing runs Docker here, so the files are read."""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from api.app import create_app
from scoreline.settings import Settings
from tests.support.http import serve
from workers.main import run as run_worker

ROOT = Path(__file__).resolve().parents[2]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
PUBLIC_SERVICE = "api"
PUBLIC_PORT = "8000"


def _published(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(host address, container port) of each port a service publishes, in either compose syntax."""
    published = []
    for entry in spec.get("ports", []):
        if isinstance(entry, dict):
            published.append((entry.get("host_ip", "0.0.0.0"), str(entry["target"])))
            continue
        parts = str(entry).split(":")
        published.append((parts[0] if len(parts) == 3 else "0.0.0.0", parts[-1]))
    return published


@pytest.mark.unit
def test_only_the_api_is_published_beyond_localhost() -> None:
    """The Temporal UI (it can terminate workflows), Prometheus and Alertmanager (anyone could add a
    silence) were published on every interface with no authentication; every port but the API's
    is now bound to 127.0.0.1, and Temporal, Postgres and Redis publish none. Failed before."""
    public = {
        (name, port)
        for name, spec in SERVICES.items()
        for host, port in _published(spec)
        if host != "127.0.0.1"
    }
    assert public == {(PUBLIC_SERVICE, PUBLIC_PORT)}
    for store in ("temporal", "postgres", "temporal-postgres", "redis"):
        assert not _published(SERVICES[store]), store
    for admin in ("temporal-ui", "prometheus", "alertmanager"):
        assert _published(SERVICES[admin]), f"{admin} is still reachable through an SSH tunnel"


@pytest.mark.unit
def test_only_the_worker_gets_the_apns_key() -> None:
    """The APNs signing key was mounted into the public API (and migrate, feeds), which never push;
    now only the worker has the secret and APNS_KEY_PATH. Failed before."""
    with_key = {name for name, spec in SERVICES.items() if "apns_key" in spec.get("secrets", [])}
    with_path = {name for name, spec in SERVICES.items() if "APNS_KEY_PATH" in spec.get("environment", {})}
    assert with_key == with_path == {"worker"}
    assert SERVICES["worker"]["environment"]["APNS_KEY_PATH"] == "/run/secrets/apns_key"


def _compose_default(value: str) -> str:
    """A compose value as deployed with nothing but the required variables set: `${X:-d}` is `d`,
    and `${X:?…}` a placeholder."""
    value = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)
    return re.sub(r"\$\{\w+:\?[^}]*\}", "set", value)


@pytest.mark.unit
def test_the_worker_pushes_to_the_devices_apples_host_serves() -> None:
    """Compose sent to Apple's production host with APNS_ENVIRONMENT left at sandbox, and the
    drainer sends only to devices of its environment: production phones would have got no push.
    Failed before (the settings now refuse the mismatch)."""
    environment = SERVICES["worker"]["environment"]
    url = _compose_default(environment["APNS_URL"])
    named = _compose_default(environment.get("APNS_ENVIRONMENT", "sandbox"))
    settings = Settings(_env_file=None, apns_url=url, apns_environment=named)  # type: ignore[call-arg]
    assert settings.apns_environment == "production"


@pytest.mark.unit
def test_an_apns_environment_apples_host_does_not_serve_is_refused() -> None:
    with pytest.raises(ValueError, match="set APNS_ENVIRONMENT=sandbox"):
        Settings(  # type: ignore[call-arg]
            _env_file=None, apns_url="https://api.sandbox.push.apple.com", apns_environment="production"
        )


SERVICE_IGNORE = ROOT / ".dockerignore"
DEVKIT_IGNORE = ROOT / "devkit" / "Dockerfile.dockerignore"
"""BuildKit reads `<Dockerfile>.dockerignore` beside a Dockerfile instead of the root one."""


def _dockerignore_excludes(path: str, ignore_file: Path = SERVICE_IGNORE) -> bool:
    """Whether `docker build` leaves `path` (relative to the context) out, as .dockerignore reads:
    patterns anchored at the context's root, `*` within one path segment, `**` across any number,
    the last matching pattern wins, `!` brings a path back, and a directory takes its contents along."""
    rules = []
    for line in ignore_file.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        pattern = line.removeprefix("!").strip("/")
        regex = re.escape(pattern).replace(r"\*\*/", "(.*/)?").replace(r"\*\*", ".*")
        regex = regex.replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
        rules.append((re.compile(regex), keep))
    segments = path.split("/")
    excluded = False
    for depth in range(1, len(segments) + 1):
        prefix = "/".join(segments[:depth])
        for regex, keep in rules:
            if regex.fullmatch(prefix):
                excluded = not keep
    return excluded


LEFT_OUT = [
    ".scoreline/env",
    ".scoreline/apns/AuthKey_DEVKEY1234.p8",
    "secrets/apns_key.p8",
    "AuthKey_ABC123.p8",
    "deploy/tls/server.pem",
    "server.key",
    ".env",
    ".git/config",
    ".venv/bin/python",
    ".tools/chromium/chrome",
    "scoreline/__pycache__/settings.cpython-311.pyc",
    ".pytest_cache/v/cache/lastfailed",
    "tests/conftest.py",
    "bench/out/run.json",
    "devkit/devkit/simulators/provider/config.py",
    "devkit/devkit/soak/run.py",
    "devkit/devkit/devstack/stack.py",
    "recordings/football-three-matches.jsonl",
]
KEPT = [
    "pyproject.toml",
    "uv.lock",
    "README.md",
    "scoreline/settings.py",
    "scoreline/cli/services.py",
    "api/web/static/console.html",
    "migrations/env.py",
    "alembic.ini",
    "devkit/pyproject.toml",
]
DEVKIT_KEPT = [
    *KEPT,
    "devkit/devkit/simulators/provider/config.py",
    "recordings/football-three-matches.jsonl",
]


@pytest.mark.unit
@pytest.mark.parametrize("path", LEFT_OUT)
def test_the_image_leaves_out_secrets_and_development_files(path: str) -> None:
    """With no .dockerignore, `COPY . .` put `.scoreline/env` (dev addresses and tokens), any APNs
    or TLS key, `.git` and the virtualenvs into the image; the devkit and the recordings stay out
    of the service's image too."""
    assert _dockerignore_excludes(path)


@pytest.mark.unit
@pytest.mark.parametrize("path", KEPT)
def test_the_image_keeps_what_its_commands_run(path: str) -> None:
    """The packages, the lock, the migrations and the devkit's manifest (uv reads every workspace
    member's) are still in the build context."""
    assert (ROOT / path).exists()
    assert not _dockerignore_excludes(path)


@pytest.mark.unit
@pytest.mark.parametrize("path", DEVKIT_KEPT)
def test_the_devkit_image_keeps_the_simulators_and_recordings(path: str) -> None:
    """Compose's `simulators` profile runs the devkit image, which replays /app/recordings."""
    assert (ROOT / path).exists()
    assert not _dockerignore_excludes(path, DEVKIT_IGNORE)


def test_the_service_wheel_carries_no_devkit_and_no_recordings(tmp_path: Path) -> None:
    """The wheel `uv build` makes from the root pyproject.toml shipped the simulators; it now holds
    the service's packages only."""
    uv = shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    subprocess.run(
        [uv, "build", "--wheel", "--out-dir", str(tmp_path)], cwd=ROOT, check=True, capture_output=True
    )
    (wheel,) = tmp_path.glob("scoreline-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        top = {name.split("/")[0] for name in archive.namelist() if "/" in name}
    assert {"scoreline", "domain", "workflows", "activities", "workers", "api", "migrations"} <= top
    assert not top & {"devkit", "simulators", "recordings", "tests", "bench"}, sorted(top)
    with zipfile.ZipFile(wheel) as archive:
        assert not [name for name in archive.namelist() if "/soak/" in name or "/devstack/" in name]


def _production(monkeypatch: pytest.MonkeyPatch, **overrides: Any) -> Settings:
    for name in ("APNS_KEY_PATH", "API_METRICS_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    values: dict[str, Any] = {
        "scoreline_env": "production",
        "database_url": "postgresql://db/scoreline",
        "redis_url": "redis://cache/0",
        "provider_token": "real-token",
        **overrides,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.mark.unit
def test_the_api_starts_in_production_without_the_apns_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Production Settings refused to build without APNS_KEY_PATH, so the API (which never pushes)
    needed the key mounted; now they build and the app is made without it. Failed before."""
    settings = _production(monkeypatch)
    assert settings.apns_key_path is None
    create_app(settings)


@pytest.mark.unit
async def test_the_production_worker_refuses_to_start_without_the_apns_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker is the process that pushes: without the key every push with a target would fail
    for good, so it refuses at start-up, naming the variable, before it connects to anything."""
    with pytest.raises(RuntimeError, match="APNS_KEY_PATH"):
        await run_worker(_production(monkeypatch))


@pytest.mark.unit
def test_a_named_key_must_still_be_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A key path that is set but names no file is refused by every production process."""
    with pytest.raises(ValueError, match="is not a file"):
        _production(monkeypatch, apns_key_path=tmp_path / "nowhere.p8")


async def test_production_serves_no_metrics_on_the_public_port(
    monkeypatch: pytest.MonkeyPatch, database_url: str, redis_url: str
) -> None:
    """Without API_METRICS_ADDRESS the API served `/metrics` on its public port; in production it is
    now on an internal one (`PRODUCTION_API_METRICS_ADDRESS`). Failed on main before that default."""
    settings = _production(monkeypatch, database_url=database_url, redis_url=redis_url)
    async with serve(create_app(settings)) as url, httpx.AsyncClient() as http:
        assert (await http.get(f"{url}/readyz")).status_code in (200, 503)
        assert (await http.get(f"{url}/metrics")).status_code == 404
