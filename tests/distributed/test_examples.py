"""The examples of ``enqueue``/``worker``/``status --help`` and the docs' blocks of the
Redis workers (docs/tutorials/data-engineer.md) run against the suite's redis-server and
a farm of loopback sites.

The examples name ``redis://queue.internal:6379/0`` (or ``redis://queue:6379``, /0 or not),
``example.com`` and ``example.org``: they become the real server (on a database of this
test alone, so no other test's keys are near) and two loopback sites. A worker example
without ``--drain`` would serve forever; it gets ``--drain`` so it ends once the queue is
empty, and ``--allow-private`` (the sites are loopback ones). The docs' ``pip install``
line is not run (the test extra already holds it).
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import redis

from tests.cli.test_examples import REDIS_COMMANDS, help_examples
from tests.conftest_cli import SITEMAP_READER
from tests.distributed.farm import Farm
from tests.distributed.proc_kit import DEADLINE, ROOT
from tests.distributed.redis_kit import RedisServer
from tests.doc_pages import doc_blocks

#: A database number no other test uses.
EXAMPLES_DB = 7
_REDIS_URL = re.compile(r"redis://queue(?:\.internal)?:6379(?:/0)?")


def _localize(text: str, redis_url: str, farm: Farm, out: Path) -> str:
    first, second = (site.target for site in farm.sites)
    text = _REDIS_URL.sub(redis_url, text)
    text = text.replace("example.com", first).replace("example.org", second)
    return text.replace("/data/out", str(out))


def _drained(line: str) -> str:
    """A worker line that ends once the queue is empty and may read the loopback sites."""
    if " worker " not in f" {line} ":
        return line
    line = line.split("#", 1)[0].rstrip() + " --allow-private"
    return line if "--drain" in line else line + " --drain"


def _bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # The command is the zygote's shim (tests/cli_zygote.py), the venv's scripts next.
    folders = [os.path.dirname(SITEMAP_READER), str(Path(sys.executable).parent)]
    env = {**os.environ, "PATH": os.pathsep.join([*folders, os.environ.get("PATH", "")])}
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=DEADLINE,
    )  # fmt: skip


def _setup(redis_server: RedisServer, tmp_path: Path, farm: Farm) -> tuple[str, Path]:
    url = redis_server.url.rsplit("/", 1)[0] + f"/{EXAMPLES_DB}"
    client = redis.Redis.from_url(url)  # set-up: no interpreter of its own for one FLUSHDB
    try:
        client.flushdb()
    finally:
        client.close()
    targets = "".join(f"{site.target}\n" for site in farm.sites)
    (tmp_path / "domains.txt").write_text(targets)
    (tmp_path / "domains.txt.gz").write_bytes(gzip.compress(targets.encode()))
    out = tmp_path / "out"
    out.mkdir()
    return url, out


def test_help_examples_of_the_redis_commands_run(redis_server: RedisServer, tmp_path: Path) -> None:
    """Every enqueue/worker/status help example runs in order and exits 0; the worker
    examples leave one file per target."""
    examples = [line for command, line in help_examples() if command in REDIS_COMMANDS]
    assert {line.split()[1] for line in examples if "|" not in line} == REDIS_COMMANDS
    if shutil.which("jq") is None:
        examples = [e for e in examples if "jq " not in e]  # jq ships with the machine image
    order = {"enqueue": 0, "worker": 1, "status": 2}
    examples.sort(key=lambda e: order[next(w for w in e.split() if w in order)])
    with Farm(2) as farm:
        url, out = _setup(redis_server, tmp_path, farm)
        for example in examples:
            line = _drained(_localize(example, url, farm, out)).replace("-o out/", f"-o {out}")
            done = _bash(line, tmp_path)
            assert done.returncode == 0, (example, done.stderr)
            assert "Traceback" not in done.stderr, example
        files = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert len(files) == 2, files
    assert all((out / name).read_text().count("\n") == 100 for name in files)


def test_doc_blocks_of_the_workers_run(redis_server: RedisServer, tmp_path: Path) -> None:
    """The docs' shell block (pip line aside) and Python block for workers run: the
    targets are queued, drained by a worker, and their files written."""
    shell = [b for b in doc_blocks("sh") if "--redis" in b]
    python = [b for b in doc_blocks("python") if "sitemap_reader.distributed" in b]
    assert len(shell) == 1 and len(python) == 1
    with Farm(2) as farm:
        url, out = _setup(redis_server, tmp_path, farm)
        lines = [
            _drained(line)
            for line in _localize(shell[0], url, farm, out).splitlines()
            if line.strip() and not line.lstrip().startswith(("#", "python -m pip"))
        ]
        done = _bash("\n".join(lines), tmp_path)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        assert len([p for p in out.iterdir() if not p.name.startswith(".")]) == 2
        for stale in out.iterdir():
            stale.unlink()
        script = tmp_path / "workers.py"
        code = _localize(python[0], url, farm, out)
        script.write_text(code.replace("per_host=4)", "per_host=4, allow_private=True)"))
        # The targets are done now; the Python block queues the same two: nothing new.
        ran = subprocess.run(
            [sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True,
            timeout=DEADLINE,
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["0", "0"], ran.stdout
