"""Prometheus and Alertmanager as local child processes, configured for the stack at hand.

`scoreline dev` runs them when the binaries are on this machine (Debian's `prometheus` and
`prometheus-alertmanager` packages; `make ops-tools` installs them), and the tests that check an
alert end to end run them the same way. The rules are the repository's own
(`ops/prometheus/*.rules.yml`); the scrape targets are the stack's processes; the Alertmanager
routing is the repository's (`ops/alertmanager/alertmanager.yml`) with its webhook pointed at the
local receiver, if any. Configs are written as JSON, which both read as YAML.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from devkit.devstack.process import ChildProcess

OPS_DIR = Path(__file__).resolve().parents[3] / "ops"
RULES_DIR = OPS_DIR / "prometheus"
ALERTMANAGER_CONFIG = OPS_DIR / "alertmanager" / "alertmanager.yml"


@dataclass(frozen=True)
class MonitoringBinaries:
    prometheus: Path
    alertmanager: Path


def find_binaries() -> MonitoringBinaries | None:
    """Both binaries, from PATH or Debian's /usr/bin; None unless both are there."""
    found = [_which(name) for name in ("prometheus", "prometheus-alertmanager")]
    if found[1] is None:
        found[1] = _which("alertmanager")
    prometheus, alertmanager = found
    if prometheus is None or alertmanager is None:
        return None
    return MonitoringBinaries(prometheus=prometheus, alertmanager=alertmanager)


def _which(name: str) -> Path | None:
    path = shutil.which(name) or shutil.which(name, path="/usr/bin")
    return Path(path) if path else None


def repository_rules() -> list[Path]:
    """The alert rules shipped in the repository (none when run outside a checkout)."""
    return sorted(RULES_DIR.glob("*.rules.yml"))


def prometheus_config(
    targets: Mapping[str, str],
    *,
    rules: Sequence[Path],
    alertmanager: str | None,
    interval: str = "5s",
) -> dict[str, Any]:
    """Scrape each `targets` job (name -> metrics URL) every `interval`; evaluate `rules` as often."""
    scrape_configs = []
    for job, url in targets.items():
        parts = urlsplit(url)
        scrape_configs.append(
            {
                "job_name": job,
                "metrics_path": parts.path or "/metrics",
                "scheme": parts.scheme or "http",
                "static_configs": [{"targets": [parts.netloc]}],
            }
        )
    config: dict[str, Any] = {
        "global": {"scrape_interval": interval, "evaluation_interval": interval},
        "rule_files": [str(path) for path in rules],
        "scrape_configs": scrape_configs,
    }
    if alertmanager is not None:
        config["alerting"] = {
            "alertmanagers": [{"static_configs": [{"targets": [urlsplit(alertmanager).netloc]}]}]
        }
    return config


def alertmanager_config(webhook: str | None, **timing: str) -> dict[str, Any]:
    """The repository's routing, its webhooks sent to `webhook` (or dropped: alerts stay readable
    through Alertmanager's API and `GET /v1/ops/alerts`). `timing` overrides the route's
    `group_wait`, `group_interval` or `repeat_interval` (tests shorten them)."""
    import yaml  # a dev dependency: the production image never runs local monitoring

    config: dict[str, Any] = yaml.safe_load(ALERTMANAGER_CONFIG.read_text())
    for receiver in config.get("receivers", []):
        if "webhook_configs" in receiver:
            if webhook is None:
                del receiver["webhook_configs"]
            else:
                for hook in receiver["webhook_configs"]:
                    hook["url"] = webhook
    config["route"].update(timing)
    return config


def write_config(path: Path, config: Mapping[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2))
    return path


def prometheus_process(binary: Path, config: Path, data_dir: Path, port: int, log_path: Path) -> ChildProcess:
    argv = [
        str(binary),
        f"--config.file={config}",
        f"--storage.tsdb.path={data_dir}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.format=json",
    ]
    return ChildProcess("prometheus", argv, log_path)


def alertmanager_process(
    binary: Path, config: Path, data_dir: Path, port: int, log_path: Path
) -> ChildProcess:
    argv = [
        str(binary),
        f"--config.file={config}",
        f"--storage.path={data_dir}",
        f"--web.listen-address=127.0.0.1:{port}",
        # One instance: no gossip port (it would take :9094 and look for peers).
        "--cluster.listen-address=",
        "--log.format=json",
    ]
    return ChildProcess("alertmanager", argv, log_path)
