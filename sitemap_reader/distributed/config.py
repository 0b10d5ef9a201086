"""The names and the bounds of the distributed queue: Redis keys, worker limits, file names.

Everything two workers must agree on lives here: the key layout of a queue (one
namespace, every key under one hash tag so the Lua scripts also work on Redis Cluster)
and the name of the output file of a target. The bounds of a worker are named with their
defaults and the reason for each, as :mod:`sitemap_reader.options.limits` does for a run.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

from sitemap_reader.errors import UsageError
from sitemap_reader.options.declare import redis_url
from sitemap_reader.options.worker import WorkerLimits as WorkerLimits

#: The namespace of a queue when none is given: the key prefix of every key.
DEFAULT_NAMESPACE: Final = "sitemap-reader"
#: The consumer group every worker of a queue joins (one group: each target goes to one
#: worker at a time).
GROUP: Final = "workers"
#: Extension of an output file, by ``--format``.
SUFFIXES: Final = {"jsonl": ".jsonl", "csv": ".csv", "txt": ".txt"}

#: Consumer names that hold the entries no worker runs: ``FREE`` (given back: anyone may
#: take it at once) and ``RETRY`` (failed: anyone may take it after the retry delay).
#: A ``~`` never starts a real consumer name (host:pid:random).
FREE: Final = "~free"
RETRY: Final = "~retry"
#: Seconds a commit marker lives (the record that an attempt won its fenced commit, kept
#: until its file is renamed into place): long enough for a machine that crashed between
#: the two to come back and repair it; a week covers a long weekend's outage.
COMMIT_TTL: Final = 7 * 24 * 3600
#: Seconds a target's records-stream dedupe set lives after its last write: a stale or
#: dead attempt can leave one behind; a day is far past any run (see ``target_timeout``).
SENT_TTL: Final = 24 * 3600

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class Keys:
    """The Redis keys of one queue. ``{ns}`` is a hash tag: all keys share one slot.

    >>> Keys("q").targets
    '{q}:targets'
    """

    namespace: str = DEFAULT_NAMESPACE

    def _key(self, name: str) -> str:
        return f"{{{self.namespace}}}:{name}"

    @property
    def targets(self) -> str:
        """Stream of targets to do (field ``t``); entries are deleted once settled."""
        return self._key("targets")

    @property
    def queue_id(self) -> str:
        """String: the random id of this queue, set when its stream was created. A worker
        remembers it; when it is gone or changed, the queue vanished (a Redis restart
        without persistence) and the worker stops instead of making it again."""
        return self._key("id")

    @property
    def claims(self) -> str:
        """Hash entry id -> JSON claim (``a`` attempt, ``c`` owner, ``l`` the owner's lease
        in ms, ``f`` failures, ``d`` deaths beside others, ``q`` run alone): the fencing
        token of a target is its entry id and its attempt, which only grows."""
        return self._key("claims")

    def commit(self, token: str) -> str:
        """String set when the attempt ``token`` won its commit, until its file is renamed
        into place (expires after :data:`COMMIT_TTL`)."""
        return self._key(f"commit:{token}")

    @property
    def known(self) -> str:
        """Set of every target ever enqueued: what makes ``enqueue`` idempotent."""
        return self._key("known")

    @property
    def done(self) -> str:
        """Hash target -> JSON summary of the run whose output is in place."""
        return self._key("done")

    @property
    def errors(self) -> str:
        """Hash target -> last error, while the target waits for another try."""
        return self._key("errors")

    @property
    def failed(self) -> str:
        """Hash target -> last error, for targets sent to the dead-letter stream."""
        return self._key("failed")

    @property
    def dead(self) -> str:
        """Dead-letter stream: fields ``t`` (target), ``error``, ``failures``, ``attempts``."""
        return self._key("dead")

    @property
    def state(self) -> str:
        """Hash target -> incremental state (a compressed SQLite state file)."""
        return self._key("state")

    @property
    def workers(self) -> str:
        """Hash consumer -> JSON (host, pid, last heartbeat, targets held)."""
        return self._key("workers")

    @property
    def records(self) -> str:
        """Stream of records (fields ``t``, ``r``), and an end marker per target (``end``)."""
        return self._key("records")

    def sent(self, target: str) -> str:
        """Set of the URL keys of a target already in :attr:`records` (while it runs)."""
        digest = hashlib.blake2b(target.encode("utf-8", "surrogatepass"), digest_size=8)
        return self._key(f"sent:{digest.hexdigest()}")


def output_name(target: str, fmt: str = "jsonl") -> str:
    """The file name of a target's output: the target itself when it is a safe name,
    else a readable slug and a hash (so two targets never share a file).

    >>> output_name("example.com")
    'example.com.jsonl'
    >>> output_name("https://example.com/sitemap.xml")
    'https-example.com-sitemap.xml-6a8973f4864ac54f.jsonl'
    """
    suffix = SUFFIXES[fmt]
    if _SAFE_NAME.fullmatch(target) and not target.endswith("."):
        return target + suffix
    slug = _UNSAFE_RUN.sub("-", target).strip("-.")[:80] or "target"
    digest = hashlib.blake2b(target.encode("utf-8", "surrogatepass"), digest_size=8)
    return f"{slug}-{digest.hexdigest()}{suffix}"


def check_redis_url(url: str) -> str:
    """``url`` when it is a Redis URL redis-py reads as meant, else a usage error (its
    password hidden in the message): :func:`~sitemap_reader.options.declare.redis_url`.

    >>> check_redis_url("redis://:pw@127.0.0.1:6379/2")
    'redis://:pw@127.0.0.1:6379/2'
    >>> check_redis_url("redis://host/notadb")
    Traceback (most recent call last):
    sitemap_reader.errors.UsageError: not a Redis database number in redis://host/notadb
    """
    try:
        checked = redis_url(url)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    assert checked is not None
    return checked
