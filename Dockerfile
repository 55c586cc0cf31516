# The service's image docker-compose.yml runs: the locked dependencies, no devkit (simulators, dev
# stack, soak, embedded services) and no recordings.
FROM python:3.11-slim
COPY --from=ghcr.io/astral-sh/uv:0.13 /uv /usr/local/bin/uv
WORKDIR /app
ENV UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy PATH=/app/.venv/bin:$PATH
COPY pyproject.toml uv.lock README.md ./
COPY devkit/pyproject.toml devkit/
RUN uv sync --frozen --no-default-groups --no-install-project
COPY . .
RUN uv sync --frozen --no-default-groups
USER nobody
CMD ["scoreline", "--help"]
