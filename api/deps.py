"""Route dependencies as `Annotated` aliases, so handlers declare what they use and nothing more."""

from __future__ import annotations

from typing import Annotated

import redis.asyncio as aioredis
from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from api.resources import Resources
from scoreline.settings import Settings


def _resources(request: Request) -> Resources:
    resources: Resources = request.app.state.resources
    return resources


def _engine(request: Request) -> AsyncEngine:
    return _resources(request).engine


def _redis(request: Request) -> aioredis.Redis:
    return _resources(request).redis


def _settings(request: Request) -> Settings:
    return _resources(request).settings


async def _temporal(request: Request) -> Client:
    return await _resources(request).temporal()


ResourcesDep = Annotated[Resources, Depends(_resources)]
EngineDep = Annotated[AsyncEngine, Depends(_engine)]
RedisDep = Annotated[aioredis.Redis, Depends(_redis)]
SettingsDep = Annotated[Settings, Depends(_settings)]
TemporalDep = Annotated[Client, Depends(_temporal)]
