"""Fixtures of the scrapy-redis tests: the distributed tests' real redis-server."""

from __future__ import annotations

from tests.distributed.conftest import redis_server

__all__ = ["redis_server"]
