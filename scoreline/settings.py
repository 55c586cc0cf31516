"""Every setting Scoreline reads, from the environment, in one typed object.

Built once at process start (API, worker, CLI) and passed down; workflows never see it.
`<data-dir>/env`, written by `scoreline dev`, is read as a dotenv file so every command can talk to a
running dev stack; real environment variables always win over it.
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from scoreline.durations import Duration, DurationList, OptionalDuration

DEFAULT_DATA_DIR = Path(".scoreline")
ENV_FILE_NAME = "env"
PRODUCTION_API_METRICS_ADDRESS = "127.0.0.1:9466"

APPLE_APNS_HOSTS = {"api.push.apple.com": "production", "api.sandbox.push.apple.com": "sandbox"}
"""Apple's two APNs hosts and the device builds each serves: a token of the other build is refused."""


class Environment(StrEnum):
    DEVELOPMENT = "development"
    PRODUCTION = "production"


class Settings(BaseSettings):
    """Scoreline's configuration. Each field maps to the upper-case environment variable."""

    model_config = SettingsConfigDict(env_ignore_empty=True, extra="ignore", frozen=True)

    scoreline_env: Environment = Environment.DEVELOPMENT
    data_dir: Path = Field(default=DEFAULT_DATA_DIR, validation_alias="SCORELINE_DATA_DIR")

    database_url: str | None = None
    # Postgres connections per role in the worker (each may double under a burst), and the feed
    # builder's; the API's pool is `DB_POOL_API`.
    db_pool_ingest: int = Field(default=10, ge=1, le=200)
    db_pool_commands: int = Field(default=4, ge=1, le=100)
    db_pool_pushes: int = Field(default=4, ge=1, le=100)
    db_pool_background: int = Field(default=2, ge=1, le=50)
    db_pool_feeds: int = Field(default=2, ge=1, le=50)
    db_pool_api: int = Field(default=10, ge=1, le=200)
    # How long an API request waits for a connection of a busy pool before it is answered 503
    # `unavailable` with Retry-After (the client resends) instead of holding on.
    api_db_pool_timeout: Duration = timedelta(seconds=5)
    redis_url: str | None = None
    temporal_address: str = "127.0.0.1:7233"
    temporal_namespace: str = "default"
    temporal_task_queue: str = "scoreline"
    temporal_watch_task_queue: str = "scoreline-watch"

    provider_url: str = "http://127.0.0.1:8100"
    provider_token: SecretStr = SecretStr("dev-provider-token")
    provider_timeout: Duration = timedelta(seconds=5)
    provider_breaker_cooldown: Duration = timedelta(seconds=30)
    # SportMonks Cricket v2 is another API (base URL, token in the query) with the same transport.
    cricket_provider_url: str = "http://127.0.0.1:8100/api/v2.0"
    cricket_provider_token: SecretStr = SecretStr("dev-provider-token")
    cricket_stumps_interval: OptionalDuration = timedelta(minutes=5)
    # NoDecode: the environment holds `2m,10m,1h`, not the JSON pydantic-settings expects of a tuple.
    cricket_post_match_rechecks: Annotated[DurationList, NoDecode] = (
        timedelta(minutes=2),
        timedelta(minutes=10),
        timedelta(hours=1),
        timedelta(hours=6),
        timedelta(hours=24),
    )

    poll_interval_live: OptionalDuration = timedelta(seconds=2.5)
    poll_interval_idle: OptionalDuration = timedelta(seconds=5)
    reconcile_interval: OptionalDuration = timedelta(seconds=60)
    fixture_sync_interval: OptionalDuration = timedelta(seconds=60)
    fixture_sync_days_ahead: int = 1
    kickoff_lead: Duration = timedelta(minutes=5)
    full_time_settle: Duration = timedelta(minutes=5)
    postponed_recheck_interval: Duration = timedelta(minutes=10)
    postponed_give_up: Duration = timedelta(days=7)
    watch_heartbeat_timeout: Duration = timedelta(seconds=10)
    watch_max_concurrent: int = 2000
    # Retention (`workflows.retention`): the Schedule `retention-{task_queue}` runs every
    # `retention_interval` (`off` pauses it) and deletes, `retention_batch` rows per short
    # transaction, outbox rows older than their age that every durable consumer has read, push
    # attempts, commands (a resent key is answered from its row until then, design §2), the
    # published Live Activity pushes (`la_push`) of matches over for longer than their age
    # (nothing is pushed for them afterwards), and superseded partner document versions. An age
    # of `off` keeps that table forever.
    retention_interval: OptionalDuration = timedelta(hours=1)
    retention_outbox_age: OptionalDuration = timedelta(days=7)
    retention_push_attempt_age: OptionalDuration = timedelta(days=30)
    retention_command_age: OptionalDuration = timedelta(days=30)
    retention_la_push_age: OptionalDuration = timedelta(days=30)
    retention_document_age: OptionalDuration = timedelta(days=7)
    # The webhook delivery log partners read (`GET /v1/partner/webhooks/{id}/deliveries`).
    retention_webhook_attempt_age: OptionalDuration = timedelta(days=30)
    retention_batch: int = Field(default=1000, ge=1, le=50_000)

    apns_url: str = "https://127.0.0.1:8443"
    apns_team_id: str = "DEVTEAM123"
    apns_key_id: str = "DEVKEY1234"
    apns_key_path: Path | None = None
    apns_topic: str = "com.scoreline.app"
    apns_ca_file: Path | None = None
    la_min_update_interval: Duration = timedelta(seconds=5)
    # Apple ends a Live Activity after 8 hours: the followers' are ended and started anew after this.
    la_renew_after: Duration = timedelta(hours=7, minutes=30)
    # Follow and unfollow calls one device may make per minute (429 with Retry-After beyond).
    follow_rate_limit: int = Field(default=30, ge=1)
    # Device registrations one client address may make per minute (429 with Retry-After beyond).
    device_registration_rate_limit: int = Field(default=20, ge=1)
    # Live Activity drainer: which device environment this deployment's APNS_URL serves, the
    # connection pool, how many requests it has in flight, and how many rows one take leases.
    apns_environment: Literal["sandbox", "production"] = "sandbox"
    apns_max_connections: int = Field(default=4, ge=1, le=64)
    apns_request_timeout: Duration = timedelta(seconds=10)
    push_concurrency: int = Field(default=500, ge=1, le=5000)
    push_batch_size: int = Field(default=250, ge=1, le=10_000)

    api_host: str = "127.0.0.1"
    api_port: int = 8000
    # The largest request body any write route reads (413 beyond, judged before reading it).
    api_max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    # How long the API waits for a desk command's answer before answering `try_again` (503); the
    # command stays in flight, and a resend with the same key attaches to it.
    command_answer_timeout: Duration = timedelta(seconds=5)
    api_url: str = "http://127.0.0.1:8000"
    apns_admin_url: str = "http://127.0.0.1:8444"
    log_level: str = "info"
    log_format: str | None = None

    # Live screens (SSE, WebSocket) and the outbox listener that feeds them (`scoreline.outbox`,
    # `api.live`). The outbox reads every `safety_interval` even when no NOTIFY arrived, at most
    # `batch` rows per query. A client whose queue of unsent changes reaches `client_queue` is
    # dropped (it reconnects and resumes from its Last-Event-ID) instead of slowing the others.
    # `redis_fanout` also relays every change through Redis pub/sub, so a process whose LISTEN
    # connection is down still hears the changes another process read.
    outbox_safety_interval: Duration = timedelta(seconds=5)
    outbox_batch: int = Field(default=500, ge=1, le=10_000)
    live_keepalive_interval: Duration = timedelta(seconds=15)
    live_client_queue: int = Field(default=256, ge=1)
    live_redis_fanout: bool = True
    # Open SSE and WebSocket connections one API process keeps, in all and per client address;
    # one more is refused (SSE 503/429 with Retry-After, WebSocket close 1013).
    live_max_connections: int = Field(default=20_000, ge=1)
    live_max_connections_per_client: int = Field(default=1_000, ge=1)

    # Partner webhooks (`scoreline.webhooks`, run by `scoreline feeds`). A message that has failed
    # for `webhook_retry_for` pauses its endpoint (nothing is dropped; resume continues). Retries
    # wait a full-jitter exponential from `webhook_backoff_first` up to `webhook_backoff_cap`, and
    # never less than a receiver's Retry-After. A POST has `webhook_timeout` to be answered; at most
    # `webhook_concurrency` are in flight per process, `webhook_endpoint_concurrency` per endpoint.
    webhook_retry_for: Duration = timedelta(hours=24)
    webhook_backoff_first: Duration = timedelta(seconds=1)
    webhook_backoff_cap: Duration = timedelta(minutes=10)
    webhook_timeout: Duration = timedelta(seconds=10)
    webhook_concurrency: int = Field(default=256, ge=1, le=10_000)
    webhook_endpoint_concurrency: int = Field(default=16, ge=1, le=1_000)

    # Metrics (`scoreline.metrics`, `api.metrics`). The worker and the feed builder serve
    # Prometheus on these host:port addresses (empty: no exporter). The API serves `/metrics` on
    # its own port unless `api_metrics_address` names another one: in production, an internal
    # port the public ingress never routes to. `provider_hourly_budget` is the calls per entity
    # per hour the workers spend at most between them (`activities.provider.budget`: the live
    # board polled no faster than it pays for, a match's own fetches first, reconciles stretched) and the denominator of the budget alert; set
    # it at or below the plan's. `provider_budget_window` is the provider's counting window (an
    # hour at SportMonks; tests shorten it).
    worker_metrics_address: str = "127.0.0.1:9464"
    feeds_metrics_address: str = "127.0.0.1:9465"
    api_metrics_address: str = ""
    provider_hourly_budget: int = Field(default=2000, ge=1)
    provider_budget_window: Duration = timedelta(hours=1)
    # Where `GET /v1/ops/alerts` reads what is firing (empty: no Alertmanager configured).
    alertmanager_url: str = ""
    # The operator console (`/console`) links each match to its workflow here (empty: no links);
    # `scoreline dev` writes the dev server's UI address to `<data-dir>/env`.
    temporal_ui_url: str = ""
    # Origins whose web pages may read the public API from the browser (CORS): `GET /v1/matches*`,
    # the SSE streams and the WebSocket. `*` (the default, for development) is any origin; in
    # production a comma list of exact origins (`https://scores.example.com`), and none unless set.
    # Commands, devices, partner feeds and the console never answer another origin's browser.
    api_cors_origins: str = "*"

    @model_validator(mode="before")
    @classmethod
    def _production_defaults(cls, data: Any) -> Any:
        """Development's defaults that would expose too much in production: there, no other
        origin's browser reads the API unless named, and `/metrics` is off the public port (on
        `PRODUCTION_API_METRICS_ADDRESS`, which no ingress routes to) unless an address is set."""
        if not (
            isinstance(data, dict)
            and str(data.get("scoreline_env", "")).lower() == Environment.PRODUCTION.value
        ):
            return data
        defaults = {"api_cors_origins": "", "api_metrics_address": PRODUCTION_API_METRICS_ADDRESS}
        return {**defaults, **data}

    @model_validator(mode="after")
    def _apns_environment_matches_the_host(self) -> Self:
        """The drainer sends only to devices of `APNS_ENVIRONMENT`: naming the other build than
        Apple's host serves would leave every phone of this deployment without a push."""
        served = APPLE_APNS_HOSTS.get(urlsplit(self.apns_url).hostname or "")
        if served is not None and served != self.apns_environment:
            raise ValueError(
                f"APNS_URL {self.apns_url} serves {served} devices but APNS_ENVIRONMENT is "
                f"{self.apns_environment}: set APNS_ENVIRONMENT={served}"
            )
        return self

    @model_validator(mode="after")
    def _production_needs_real_services(self) -> Self:
        """Refuse to start a production process that would fail later, request by request.

        The APNs signing key is not required here: only the worker pushes, and it refuses to start
        without one (`workers.main`); the API and the other processes run without the key. A key
        path that is set must still name a file.
        """
        if self.scoreline_env is Environment.PRODUCTION:
            required = ("database_url", "redis_url")
            missing = [name for name in required if getattr(self, name) is None]
            if missing:
                raise ValueError(f"production needs {', '.join(n.upper() for n in missing)}")
            if self.provider_token.get_secret_value() == "dev-provider-token":
                raise ValueError("production needs a real PROVIDER_TOKEN")
            if self.apns_key_path is not None and not self.apns_key_path.is_file():
                raise ValueError(
                    f"APNS_KEY_PATH {self.apns_key_path} is not a file (the APNs .p8 signing key)"
                )
        return self

    @property
    def is_production(self) -> bool:
        return self.scoreline_env is Environment.PRODUCTION

    def require_database_url(self) -> str:
        if self.database_url is None:
            raise RuntimeError("DATABASE_URL is not set (start `scoreline dev` or set it)")
        return self.database_url

    def require_redis_url(self) -> str:
        if self.redis_url is None:
            raise RuntimeError("REDIS_URL is not set (start `scoreline dev` or set it)")
        return self.redis_url


def load_settings(data_dir: Path | None = None) -> Settings:
    """Read the environment, with `<data-dir>/env` (if present) underneath it."""
    directory = data_dir or Settings().data_dir
    env_file = directory / ENV_FILE_NAME
    settings = Settings(_env_file=env_file if env_file.exists() else None)  # type: ignore[call-arg]
    return settings.model_copy(update={"data_dir": directory})
