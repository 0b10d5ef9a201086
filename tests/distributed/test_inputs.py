"""What the distributed commands take from others and show them: queued targets (input
from whoever can write to the queue), Redis URLs with passwords, target spellings, list
files, the umask, and ``status`` over a large dead-letter stream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import redis

from sitemap_reader.cli.distributed import status_lines
from sitemap_reader.distributed.config import Keys
from tests.distributed.farm import Farm
from tests.distributed.proc_kit import (
    CLI,
    DEADLINE,
    ROOT,
    Peek,
    file_of,
    finish,
    outputs,
    run_cli,
    start_worker,
)
from tests.distributed.redis_kit import RedisServer, free_port


def _base(server: RedisServer, ns: str) -> tuple[str, ...]:
    return ("--redis", server.url, "--namespace", ns)


def test_queued_paths_private_targets_and_escapes_are_refused_unread(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """A local path, a loopback site (worker without --allow-private) and a target with a
    terminal escape, written to the stream by someone else: dead-lettered, nothing read."""
    listing = tmp_path / "secret-urls.txt"
    listing.write_text("https://inside.example/a\n")
    out = tmp_path / "out"
    out.mkdir()
    with Farm(1) as farm:
        evil = "\x1b[31mred.example\x07"
        queued = [str(listing), farm.sites[0].target, evil, "ftp://x.example/"]
        peek = Peek(redis_server.url, namespace)
        try:
            for target in queued:  # straight into the stream, past enqueue's checks
                peek.client.xadd(Keys(namespace).targets, {"t": target})
            worker = start_worker(redis_server.url, namespace, out, "--drain", allow_private=False)
            code, err = finish(worker)
            hits = sum(farm.hits.values())
            dead = {d["t"]: d["error"] for d in peek.dead()}
        finally:
            peek.close()
    assert code == 0, err
    assert hits == 0  # the loopback site was never fetched
    assert outputs(out) == {}
    assert set(dead) == set(queued)
    assert all(error.startswith("refused: ") for error in dead.values())
    assert "--allow-private" in dead[farm.sites[0].target]
    assert "\x1b" not in err and "\\x1b[31mred.example" in err
    shown = run_cli("status", *_base(redis_server, namespace))
    assert shown.returncode == 0
    assert "\x1b" not in shown.stdout and "\\x1b[31mred.example\\x07" in shown.stdout


def test_passwords_never_show_and_malformed_redis_urls_are_usage_errors(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """The start line and every "cannot reach" error hide the password; bad URLs exit 2."""
    url = redis_server.url.replace("redis://", "redis://:hunter2@")
    worker = start_worker(url, namespace, tmp_path, "--drain")  # Redis ignores the password
    code, err = finish(worker)
    assert code == 0 and "hunter2" not in err and "Traceback" not in err, err
    assert f"on redis://:***@127.0.0.1:{redis_server.port}/0 ({namespace})" in err
    away = f"redis://user:hunter2@127.0.0.1:{free_port()}/0"
    for command in (["status"], ["enqueue", "a.example"]):
        done = run_cli(*command, "--redis", away)
        assert done.returncode == 1, done.stderr
        assert "cannot reach Redis at redis://user:***@127.0.0.1" in done.stderr
        assert "hunter2" not in done.stderr
    bad = ["http://x.example", "", "127.0.0.1:6379", "redis://h:99999/0", "redis://h/notadb"]
    # One process runs the command line on each (each a CLI start otherwise).
    script = (
        "import sys\nfrom sitemap_reader.cli import main\n"
        f"for url in {[*bad, 'redis://:hunter2@h:port/0']!r}:\n"
        "    try:\n        code = main(['status', '--redis', url])\n"
        "    except SystemExit as exc:\n        code = exc.code\n"
        "    print(code, flush=True)\n"
        "    print('--', file=sys.stderr, flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=DEADLINE
    )
    assert done.stdout.split() == ["2"] * 6, done.stderr
    errors = done.stderr.split("--\n")[:-1]
    assert all(len(e.strip().splitlines()) == 2 for e in errors), errors  # usage + error
    assert "Traceback" not in done.stderr and "hunter2" not in done.stderr
    assert "not a Redis database number in redis://h/notadb" in errors[4]


def test_one_site_is_one_target_whatever_its_spelling(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """Example.COM, example.com, example.com/ and https://example.com:443/ are one target;
    a list file with a BOM is read; a Latin-1 byte is one line, exit 2."""
    base = _base(redis_server, namespace)
    spellings = ["Example.COM", "example.com", "example.com/", "https://example.com:443/"]
    done = run_cli("enqueue", *base, *spellings)
    assert done.stdout.strip() == "1 new target queued, 3 already known", done.stderr
    listing = tmp_path / "bom.txt"
    listing.write_bytes(b"\xef\xbb\xbfEXAMPLE.com\nexample.org\n")
    done = run_cli("enqueue", *base, "-i", str(listing))
    assert done.stdout.strip() == "1 new target queued, 1 already known", done.stderr
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"example.net\ncaf\xe9.example\n")
    done = run_cli("enqueue", *base, "-i", str(latin))
    assert done.returncode == 2
    assert done.stderr.strip().endswith(f"{latin} line 2 is not UTF-8")
    assert "Traceback" not in done.stderr
    local = run_cli("enqueue", *base, str(listing))
    assert local.returncode == 2 and "not an http(s) URL or a domain" in local.stderr
    peek = Peek(redis_server.url, namespace)
    try:
        known = peek.client.smembers(peek.keys.known)
    finally:
        peek.close()
    assert known == {"example.com", "example.org"}


def test_worker_output_files_honour_the_umask(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """A worker started under umask 027 writes 0640 files (not 0644 whatever the umask)."""
    with Farm(1) as farm:
        run_cli("enqueue", *_base(redis_server, namespace), farm.sites[0].target)
        command = [
            *CLI, "worker", *_base(redis_server, namespace), "-o", str(tmp_path), "--drain",
            "--allow-private", "--no-progress", "--lease", "5",
        ]  # fmt: skip
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            cwd=ROOT,
            preexec_fn=lambda: os.umask(0o027),
        )
    assert done.returncode == 0, done.stderr
    mode = os.stat(tmp_path / file_of(farm.sites[0].target)).st_mode & 0o777
    assert mode == 0o640, oct(mode)


def test_status_reads_a_bounded_part_of_a_huge_dead_letter_stream(
    redis_server: RedisServer, namespace: str
) -> None:
    """With 50,000 dead letters, status shows the 10 newest and the count, reading no more."""
    keys = Keys(namespace)
    run_cli("enqueue", *_base(redis_server, namespace), "a.example")
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    try:
        for start in range(0, 50_000, 5_000):
            with client.pipeline(transaction=False) as pipe:
                for i in range(start, start + 5_000):
                    pipe.xadd(keys.dead, {"t": f"t{i}.example", "error": "boom"})
                    pipe.hset(keys.failed, f"t{i}.example", "boom")
                pipe.execute()
        client.config_resetstat()
        text = run_cli("status", *_base(redis_server, namespace))
        data = json.loads(run_cli("status", *_base(redis_server, namespace), "--json").stdout)
        stats = client.info("commandstats")
    finally:
        client.close()
    assert text.returncode == 0, text.stderr
    assert "failed         50,000" in text.stdout
    dead_lines = [line for line in text.stdout.splitlines() if "dead:" in line]
    assert dead_lines[0] == "  dead: t49999.example: boom" and len(dead_lines) == 10
    assert data["failed"] == 50_000 and len(data["dead_letters"]) == 10
    assert "cmdstat_xrange" not in stats
    assert stats["cmdstat_xrevrange"]["calls"] == 2


def test_status_tells_a_blocked_event_loop_from_a_live_worker() -> None:
    """A worker whose heartbeat beats but whose loop has not run for a lease is flagged."""
    now = time.time()
    workers = {
        "busy": {"seen": now, "loop": now - 60, "lease": 30},
        "fine": {"seen": now, "loop": now, "lease": 30},
        "gone": {"seen": now - 90, "loop": now - 90, "lease": 30},
    }
    data = {
        "queued": 0,
        "in_flight": 3,
        "in_flight_by_worker": {"busy": 1, "fine": 1, "gone": 1},
        "done": 0,
        "failed": 0,
        "retrying": 0,
        "known": 3,
        "workers": workers,
        "dead_letters": [],
    }
    lines = {line.split()[0]: line for line in status_lines(data) if line.startswith("  ")}
    assert "event loop blocked for 60 s" in lines["busy"]
    assert lines["fine"].rstrip().endswith("1")
    assert "no heartbeat" in lines["gone"]
