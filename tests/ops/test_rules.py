"""The alerting in ops/ (issue #16), checked by the tools that will run it.

promtool (Prometheus 2.42) validates the rules and the scrape config and runs the rules' unit tests
(ops/prometheus/scoreline.test.yml); amtool (Alertmanager 0.25) validates the Alertmanager config
and resolves routes. They are binaries, not Python packages: `make ops-tools` installs Debian's,
and `make test` depends on it. A missing binary fails these tests instead of skipping them, so the
alerts never go untested unnoticed. Not `unit`: they start other programs.

The pure checks here hold the files to the brief the YAML alone cannot enforce: every alert pages
or tickets with a runbook, every alert is shown firing and resolved in the rule tests, and every
label that names a problem is one Alertmanager groups by.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "ops/prometheus/scoreline.rules.yml"
RULE_TESTS = ROOT / "ops/prometheus/scoreline.test.yml"
PROMETHEUS_CONFIG = ROOT / "ops/prometheus/prometheus.yml"
ALERTMANAGER_CONFIG = ROOT / "ops/alertmanager/alertmanager.yml"
COMPOSE = ROOT / "docker-compose.yml"
WEBHOOK = "scoreline-webhook"
SEVERITIES = {"page", "ticket"}

RULE_LIST: list[dict[str, Any]] = [
    rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]
]
ALERTS: dict[str, dict[str, Any]] = {rule["alert"]: rule for rule in RULE_LIST if "alert" in rule}
TEST_GROUPS: list[dict[str, Any]] = yaml.safe_load(RULE_TESTS.read_text())["tests"]


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None and os.access(f"/usr/bin/{name}", os.X_OK):
        found = f"/usr/bin/{name}"
    assert found is not None, (
        f"{name} is neither on PATH nor in /usr/bin: `make ops-tools` installs it "
        "(Debian's prometheus and prometheus-alertmanager packages)"
    )
    return found


def _run(tool: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """The finished tool, whose exit status must be 0."""
    result = subprocess.run(
        [_tool(tool), *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, (
        f"`{tool} {' '.join(args)}` exited {result.returncode}:\n{result.stdout}{result.stderr}"
    )
    return result


def _output(tool: str, *args: str, cwd: Path = ROOT) -> str:
    """What a checking tool prints (its verdicts go to stdout or stderr, depending on the tool)."""
    result = _run(tool, *args, cwd=cwd)
    return result.stdout + result.stderr


# --- The tools ------------------------------------------------------------------------------------


def test_rules_are_valid() -> None:
    output = _output("promtool", "check", "rules", str(RULES))
    assert f"SUCCESS: {len(RULE_LIST)} rules found" in output, output


def test_prometheus_config_is_valid_and_loads_the_rules(tmp_path: Path) -> None:
    """Run from elsewhere: rule_files resolve next to the config, as in the container."""
    output = _output("promtool", "check", "config", str(PROMETHEUS_CONFIG), cwd=tmp_path)
    assert "SUCCESS: 1 rule files found" in output, output
    assert f"SUCCESS: {len(RULE_LIST)} rules found" in output, output


def test_rule_unit_tests_pass() -> None:
    output = _output("promtool", "test", "rules", str(RULE_TESTS))
    assert "SUCCESS" in output, output


def test_alertmanager_config_is_valid() -> None:
    output = _output("amtool", "check-config", str(ALERTMANAGER_CONFIG))
    assert "SUCCESS" in output, output


@pytest.mark.parametrize(
    "labels",
    [
        ["alertname=ProviderBreakerOpen", "upstream=football"],
        # As Prometheus sends it, with the rule's severity.
        ["alertname=ProviderBreakerOpen", "upstream=football", "severity=page"],
    ],
)
def test_breaker_alert_goes_to_the_webhook(labels: list[str]) -> None:
    output = _route(labels)
    assert output.split() == [WEBHOOK], output


@pytest.mark.parametrize("alert", sorted(ALERTS))
def test_every_alert_goes_to_the_webhook(alert: str) -> None:
    labels = [f"alertname={alert}", *(f"{k}={v}" for k, v in ALERTS[alert].get("labels", {}).items())]
    output = _route(labels)
    assert output.split() == [WEBHOOK], output


def _route(labels: list[str]) -> str:
    """The receivers the labels route to, one a line; amtool's warnings go to stderr.
    --verify.receivers makes amtool exit 1 when the route resolves elsewhere."""
    return _run(
        "amtool",
        "config",
        "routes",
        "test",
        f"--config.file={ALERTMANAGER_CONFIG}",
        f"--verify.receivers={WEBHOOK}",
        *labels,
    ).stdout


@pytest.mark.parametrize(
    ("tool", "image"), [("promtool", "prom/prometheus"), ("amtool", "prom/alertmanager")]
)
def test_tools_are_the_version_compose_runs(tool: str, image: str) -> None:
    """The rules are tested by the Prometheus minor version that evaluates them in production."""
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    tags = [
        spec["image"].split(":v", 1)[1]
        for spec in services.values()
        if spec.get("image", "").startswith(f"{image}:v")
    ]
    assert len(tags) == 1, f"docker-compose.yml runs {image} {len(tags)} times"
    running = re.search(r"version (\d+\.\d+)\.", _output(tool, "--version"))
    assert running is not None
    assert tags[0].startswith(running.group(1) + "."), (
        f"{tool} {running.group(1)} tests what {image}:v{tags[0]} runs"
    )


# --- The brief, checked on the files ---------------------------------------------------------------


@pytest.mark.parametrize("alert", sorted(ALERTS))
def test_alert_has_a_severity_a_summary_and_a_runbook(alert: str) -> None:
    rule = ALERTS[alert]
    assert rule.get("labels", {}).get("severity") in SEVERITIES, (
        f"{alert}: severity must be one of {SEVERITIES}"
    )
    annotations = rule.get("annotations", {})
    assert annotations.get("summary", "").strip(), f"{alert}: no summary"
    runbook = annotations.get("runbook", "").strip()
    assert runbook, f"{alert}: no runbook"
    assert "\n" not in runbook, f"{alert}: the runbook is one line"


def test_every_rule_is_one_of_the_issue_alerts() -> None:
    """Names are part of the contract (dashboards, the API's /v1/ops/alerts, the receiver)."""
    assert set(ALERTS) == {
        "ProviderBreakerOpen",
        "LiveMatchNotPolled",
        "ProviderBudgetNearlySpent",
        "ProviderPlanTooSmall",
        "OutboxConsumerBehind",
        "ApnsErrorRate",
        "ApnsForbidden",
        "LiveActivitiesBehind",
        "PartnerFeedStale",
        "PartnerFeedBuilderNotLeading",
        "WebhookEndpointPaused",
        "WorkflowTaskScheduleToStartSlow",
        "WorkerTaskSlotsExhausted",
        "ScrapeTargetDown",
    }
    assert len(ALERTS) == len(RULE_LIST), "a rule without `alert` or a duplicate name"


def test_breaker_hold_is_spelled_for_the_end_to_end_test() -> None:
    """The end-to-end test copies the rules and shortens the one `for: 60s` line: it must exist
    once, on ProviderBreakerOpen."""
    assert ALERTS["ProviderBreakerOpen"]["for"] == "60s"
    assert RULES.read_text().count("for: 60s") == 1


def _test_cases() -> list[tuple[int, int, str, list[dict[str, Any]]]]:
    """(test group index, eval time in ms, alertname, expected alerts) for every case."""
    return [
        (index, _duration_ms(str(case["eval_time"])), case["alertname"], case.get("exp_alerts") or [])
        for index, group in enumerate(TEST_GROUPS)
        for case in group.get("alert_rule_test", [])
    ]


_UNITS_MS = {
    "ms": 1,
    "s": 1000,
    "m": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
    "w": 604_800_000,
    "y": 31_536_000_000,
}


def _duration_ms(text: str) -> int:
    parts = re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text)
    assert parts and "".join(n + u for n, u in parts) == text, f"not a Prometheus duration: {text!r}"
    return sum(int(n) * _UNITS_MS[u] for n, u in parts)


def test_rule_tests_name_only_real_alerts() -> None:
    """A case for a misspelt alert expects nothing and passes whatever the rules do."""
    unknown = {alert for _, _, alert, _ in _test_cases()} - set(ALERTS)
    assert not unknown, f"scoreline.test.yml tests alerts no rule defines: {unknown}"


@pytest.mark.parametrize("alert", sorted(ALERTS))
def test_alert_is_shown_firing_and_then_resolved(alert: str) -> None:
    """Some test group expects the alert firing at one time and nothing at a later one."""
    cases = [(group, at, expected) for group, at, name, expected in _test_cases() if name == alert]
    firing = [(group, at) for group, at, expected in cases if expected]
    assert firing, f"no case in scoreline.test.yml expects {alert} to fire"
    assert all(case["exp_labels"].get("alertname", alert) == alert for _, _, exp in cases for case in exp)
    resolved = [
        (group, at)
        for group, at, expected in cases
        if not expected and any(g == group and fired_at < at for g, fired_at in firing)
    ]
    assert resolved, f"no case expects {alert} resolved (`exp_alerts: []`) after a case where it fires"


def test_every_problem_label_is_grouped_by() -> None:
    """Alertmanager sends one message per group: a label that tells two problems apart but is
    not in group_by would merge them into one message, and the second would go unseen."""
    route = yaml.safe_load(ALERTMANAGER_CONFIG.read_text())["route"]
    routes = [route, *route.get("routes", [])]
    problem_labels = {
        label
        for _, _, _, expected in _test_cases()
        for case in expected
        for label in case.get("exp_labels", {})
        if label != "severity"
    }
    assert problem_labels, "the rule tests expect no labelled alert"
    for each in routes:
        group_by = set(each.get("group_by", route["group_by"]))
        assert "alertname" in group_by
        assert problem_labels <= group_by, f"not grouped by: {problem_labels - group_by}"


def test_receivers_send_resolved() -> None:
    """The message that opened an incident is followed by the one that closes it."""
    receivers = yaml.safe_load(ALERTMANAGER_CONFIG.read_text())["receivers"]
    configs = [
        config
        for receiver in receivers
        for key, value in receiver.items()
        if key.endswith("_configs")
        for config in value
    ]
    assert configs, "no receiver sends anything"
    assert all(config.get("send_resolved") is True for config in configs)
