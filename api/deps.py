"""Route dependencies as `Annotated` aliases, so handlers declare what they use and nothing more.

They are `async def` on purpose: FastAPI runs a plain `def` dependency in its threadpool, a
thread hop per dependency per request.
"""

from __future__ import annotations

from typing import Annotated

import redis.asyncio as aioredis
from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from api.resources import Resources
from scoreline.settings import Settings


def resources_of(request: Request) -> Resources:
    """The app's resources, for code that runs outside dependency injection (a route class)."""
    resources: Resources = request.app.state.resources
    return resources


async def _resources(request: Request) -> Resources:
    return resources_of(request)


async def _engine(request: Request) -> AsyncEngine:
    return resources_of(request).engine


async def _redis(request: Request) -> aioredis.Redis:
    return resources_of(request).redis


async def _settings(request: Request) -> Settings:
    return resources_of(request).settings


async def _temporal(request: Request) -> Client:
    return await resources_of(request).temporal()


ResourcesDep = Annotated[Resources, Depends(_resources)]
EngineDep = Annotated[AsyncEngine, Depends(_engine)]
RedisDep = Annotated[aioredis.Redis, Depends(_redis)]
SettingsDep = Annotated[Settings, Depends(_settings)]
TemporalDep = Annotated[Client, Depends(_temporal)]
