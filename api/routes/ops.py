"""What is firing, for the operator console: `GET /v1/ops/alerts`, read from Alertmanager.

Alertmanager already holds the answer (every firing alert, deduplicated across Prometheus replicas,
with silences and inhibitions applied), so the API asks it rather than evaluating rules again.
Without `ALERTMANAGER_URL` the list is empty and says so (`source: none`); an Alertmanager that
does not answer is a 503, never an empty list that would read as "all is well".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import httpx
from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api.auth import OperatorDep
from api.deps import SettingsDep
from api.errors import ApiError
from api.guards.token_first import TokenFirstRoute
from scoreline.logging import get_logger

log = get_logger(__name__)

router = APIRouter(prefix="/v1/ops", tags=["ops"], route_class=TokenFirstRoute)

ALERTMANAGER_TIMEOUT = 2.0
"""Seconds the console waits for Alertmanager before it is told the alerts cannot be read."""


class OpsAlert(BaseModel):
    """One firing alert, with what the console shows and the labels that name its problem."""

    model_config = ConfigDict(frozen=True)

    name: str
    severity: str | None
    summary: str | None
    runbook: str | None
    labels: dict[str, str]
    starts_at: datetime
    fingerprint: str


class OpsAlerts(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: Literal["alertmanager", "none"]
    """`none`: no Alertmanager is configured (`ALERTMANAGER_URL`), so nothing can be firing here."""
    alerts: list[OpsAlert]


class _Status(BaseModel):
    state: str


class _AlertmanagerAlert(BaseModel):
    """The fields of Alertmanager's `GET /api/v2/alerts` items that the console needs."""

    labels: dict[str, str]
    annotations: dict[str, str] = {}
    starts_at: datetime = Field(alias="startsAt")
    fingerprint: str
    status: _Status


_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "No token, or an unknown or revoked one."},
    403: {"description": "Not an operator token."},
    503: {"description": "Alertmanager did not answer."},
}


@router.get("/alerts", response_model=OpsAlerts, responses=_ERRORS)
async def alerts(settings: SettingsDep, operator: OperatorDep) -> OpsAlerts:
    """Every active alert (not silenced, not inhibited), the longest-firing first."""
    if not settings.alertmanager_url:
        return OpsAlerts(source="none", alerts=[])
    try:
        async with httpx.AsyncClient(
            base_url=settings.alertmanager_url, timeout=ALERTMANAGER_TIMEOUT
        ) as http:
            response = await http.get(
                "/api/v2/alerts", params={"active": "true", "silenced": "false", "inhibited": "false"}
            )
            response.raise_for_status()
            found = [_AlertmanagerAlert.model_validate(item) for item in response.json()]
    except (httpx.HTTPError, ValueError, ValidationError) as error:
        log.warning("ops.alertmanager_unreadable", error=f"{type(error).__name__}: {error}")
        raise ApiError(503, "alertmanager_unavailable", "the alerts cannot be read right now") from None
    listed = [
        OpsAlert(
            name=alert.labels.get("alertname", ""),
            severity=alert.labels.get("severity"),
            summary=alert.annotations.get("summary"),
            runbook=alert.annotations.get("runbook"),
            labels=alert.labels,
            starts_at=alert.starts_at,
            fingerprint=alert.fingerprint,
        )
        for alert in found
        if alert.status.state == "active"
    ]
    return OpsAlerts(source="alertmanager", alerts=sorted(listed, key=lambda alert: alert.starts_at))
