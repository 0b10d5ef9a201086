"""Fixtures of the engine tests: a local Spark and a local Ray, both on loopback only.

These tests run under ``make test-engines`` (which sets ``SITEMAP_READER_ENGINES=1`` and
loads the network guard, ``netguard/sitecustomize.py``, into every Python process); a
plain ``pytest`` or ``make test`` does not collect them. Where they are collected they
never skip: a missing PySpark, Ray or Java is a failure.

``test_batch.py`` (``engines/batch.py``: many targets on one event loop, no engine) needs
neither, and is collected everywhere; under ``make test-engines`` it runs under the guard
too.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ENABLED = os.environ.get("SITEMAP_READER_ENGINES") == "1"

#: The files of this folder that need no engine, collected by every run.
EVERYWHERE = frozenset({"test_batch.py"})


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Outside ``make test-engines``, every entry of this folder but :data:`EVERYWHERE`."""
    if ENABLED or collection_path.name in EVERYWHERE:
        return None
    return True


#: What every engine process must not do: the file the guard notes each refusal in.
GUARD_LOG = os.environ.get("SITEMAP_READER_NETGUARD_LOG")


def pytest_configure(config: pytest.Config) -> None:
    # PySpark 4.3 warns that it does not fully support pandas 3 (the test extra's); the
    # engines use Arrow batches only.
    config.addinivalue_line(
        "filterwarnings", "ignore:PySpark does not yet fully support pandas:FutureWarning"
    )
    # Ray Data 2.60's DataContext sets its own deprecated fields when it is made.
    config.addinivalue_line("filterwarnings", "ignore::DeprecationWarning:ray.data.context")
    if ENABLED and GUARD_LOG:
        Path(GUARD_LOG).parent.mkdir(parents=True, exist_ok=True)
        Path(GUARD_LOG).write_text("")


def guard_loaded() -> bool:
    """Whether this process runs under the network guard."""
    return getattr(socket.socket.connect, "__name__", "") == "guarded_connect"


@pytest.fixture(autouse=True)
def _no_packet_left() -> Iterator[None]:
    """Every test runs under the guard, and no process refused a connection meanwhile
    (under ``make test-engines``; elsewhere only :data:`EVERYWHERE` is collected)."""
    if not ENABLED:
        yield
        return
    assert guard_loaded(), "run the engine tests with make test-engines (the network guard)"
    assert GUARD_LOG, "SITEMAP_READER_NETGUARD_LOG is not set"
    before = Path(GUARD_LOG).read_text()
    yield
    after = Path(GUARD_LOG).read_text()
    assert after == before, f"a process reached off loopback:\n{after[len(before) :]}"


def _engine_env() -> None:
    """The environment the engines inherit: loopback only, our Python, no telemetry (set
    before the test modules import Ray, which reads some of it at import)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["SPARK_LOCAL_HOSTNAME"] = "localhost"
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ["RAY_DISABLE_DOCKER_CPU_WARNING"] = "1"


if ENABLED:
    _engine_env()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local Spark: 2 threads, 3 attempts per task, every socket on 127.0.0.1, no UI."""
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2,3]")
        .appName("sitemap-reader-engines")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.python.worker.reuse", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


#: A cluster config naming its provider: Ray's API-server process (started even with the
#: dashboard off, for its usage-stats module) reads ``~/ray_bootstrap_config.yaml`` for
#: the cloud provider, and only when there is none probes the cloud metadata addresses
#: (169.254.169.254, metadata.google.internal), whether usage stats are on or off.
RAY_BOOTSTRAP = "provider:\n  type: local\n"


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local Ray: 2 CPUs, no dashboard, no usage stats, every socket on 127.0.0.1
    (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``), no probe of the cloud metadata address."""
    import ray

    home = tmp_path_factory.mktemp("ray-home")
    (home / "ray_bootstrap_config.yaml").write_text(RAY_BOOTSTRAP)
    user_home = os.environ.get("HOME")
    os.environ["HOME"] = str(home)  # Ray's processes start with it; ours gets its own back
    try:
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            configure_logging=False,
            log_to_driver=False,
        )
    finally:
        if user_home is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = user_home
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    yield ray
    ray.shutdown()
