"""Fixtures of the distributed tests: one real redis-server for the session, a fresh
queue namespace per test, and helpers to run the CLI as real processes."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from tests.distributed.redis_kit import RedisServer, find_redis_server


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A redis-server on 127.0.0.1 (a failure in CI when none can be started)."""
    in_ci = os.environ.get("CI") == "true"
    binary = find_redis_server()
    if binary is None:
        message = "no redis-server: set $REDIS_SERVER, put one on PATH, or install '.[test]'"
        if in_ci:
            pytest.fail(message)
        pytest.skip(message)
    try:
        server = RedisServer(binary).__enter__()
    except RuntimeError as exc:
        if in_ci:
            pytest.fail(f"cannot start redis-server: {exc}")
        pytest.skip(f"cannot start redis-server: {exc}")
    yield server
    server.__exit__(None, None, None)


@pytest.fixture
def namespace() -> str:
    """A queue namespace of this test alone (tests share the server, never keys)."""
    return f"t-{uuid.uuid4().hex[:10]}"
