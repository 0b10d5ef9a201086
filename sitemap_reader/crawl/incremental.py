"""The crawl side of incremental runs: plan each sitemap from the state, track what it
lists, and save it once the consumer has the records.

Theory of operation
-------------------
The discovery core asks :meth:`IncrementalRun.watch` for one :class:`SitemapWatch` per
sitemap (the core's :class:`~sitemap_reader.discovery.observer.Observer` shape; a run
without state uses the null observer) and calls it at fixed points: ``plan`` before the
fetch, ``headers`` for the request, ``not_modified`` on a 304, ``begin``/``feed`` on the
body, ``child`` and ``observe`` for what it lists, ``settle`` at the end.

* A child whose lastmod in its index is not newer than the one stored from the last
  complete read is not fetched at all (``trust_index_lastmod``); it is *unchanged*.
* Otherwise the request carries ``If-None-Match`` / ``If-Modified-Since`` from the last
  complete read; a 304 means unchanged.
* An unchanged index has its stored children walked again (they may have changed even
  if it did not); an unchanged urlset emits nothing (its URLs were emitted before and
  only their 8-byte keys are stored, not their text).
* A sitemap that is read gets a :class:`Tracker`: the body's hash, and the key, lastmod
  and URL text of every in-scope URL it lists (duplicates of other sitemaps included).
  Each record is looked up in the state: new, or lastmod moved forward, or neither
  (dropped with ``changed_only``); a lastmod that moved forward also gives the record
  an observed revisit interval. If the read completes and the hash equals the stored
  one, the sitemap is unchanged after all and only its validators are refreshed.

Saving: when a sitemap ends, :meth:`SitemapWatch.settle` turns the outcome into a
:class:`~sitemap_reader.discovery.actions.Checkpoint` action carrying the write, which
the driver puts in the output channel behind the sitemap's records. The consumer side
runs it when it reaches it, that is after the consumer took all of that sitemap's
records, so a consumer that stops
or dies early never leaves a sitemap marked seen whose records it did not get. The
write is committed at once (``state_commit="sitemap"``) or with everything else when
the consumer has taken the last record (``"run"``, and always for ranked output, which
only reaches the consumer at the end). A sitemap cut by a stop writes nothing; one
that broke after listing URLs saves them as seen (they went out), and nothing else. The
last checkpoint (:meth:`IncrementalRun.finale`) resolves removals and yields the removed URLs
as records (``removed=True``) when asked for.
"""

from __future__ import annotations

import dataclasses
import hashlib
import operator
from array import array
from collections.abc import AsyncGenerator, Callable, Iterator
from datetime import datetime
from itertools import chain

from sitemap_reader.crawl.schedule import Channel
from sitemap_reader.discovery.actions import Checkpoint
from sitemap_reader.discovery.model import SitemapNode, Stats
from sitemap_reader.discovery.observer import Observer, StoredChildren, Watch
from sitemap_reader.options import Options
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.records import UrlRecord
from sitemap_reader.records.scoring import revisit_interval
from sitemap_reader.store import (
    SitemapRead,
    StateStore,
    StoredSitemap,
    from_seconds,
    pack_urls,
    to_seconds,
    url_keys,
)

Batch = list[UrlRecord]
#: What the output channel carries: batches of records, and state writes between them.
Item = Batch | Checkpoint
#: The options of a run that did not say any.
DEFAULT_OPTIONS = Options()

_url_of = operator.attrgetter("url")
_lastmod_of = operator.attrgetter("lastmod")


async def unpack(channel: Channel[Item]) -> AsyncGenerator[Batch, None]:
    """The channel's batches, running each checkpoint when it is reached."""
    while (item := await channel.get()) is not None:
        if type(item) is Checkpoint:
            for extra in item.run():
                yield extra
        elif item:
            yield item  # type: ignore[misc]


def node_key(url: str) -> str:
    """The state's key of a sitemap: its normalized URL (as for "visited")."""
    return normalize_url(url) or url


class Tracker:
    """What one sitemap read lists so far (see the module docstring).

    On the loop's thread it computes only what the run needs at once: each record's key
    (for the lookups). The rest of the saved read (lastmods as seconds, the compressed
    URL text) is made from the kept records by :meth:`read`, which runs on the state's
    writer thread."""

    __slots__ = ("batches", "children", "count", "digest", "etag", "keys", "last_modified")

    def __init__(self, etag: str | None, last_modified: str | None) -> None:
        self.etag = etag
        self.last_modified = last_modified
        self.digest = hashlib.blake2b(digest_size=16)
        self.keys = array("q")
        self.batches: list[list[UrlRecord]] = []
        self.count = 0
        self.children: list[tuple[str, int | None]] = []

    def add(self, records: list[UrlRecord]) -> list[int]:
        """Track records; their keys, in order."""
        keys = url_keys(map(_url_of, records))
        self.keys.extend(keys)
        self.batches.append(records)
        self.count += len(records)
        return keys

    def read(self, url: str, node: SitemapNode, digest: bytes | None) -> SitemapRead:
        """The finished read, for :meth:`StateStore.save_read` (``digest``: the body's
        hash, taken when the sitemap settled), or the URLs of a read that broke off, for
        :meth:`StateStore.save_seen` (``digest`` None)."""
        # Whole-sitemap passes through C-level maps: no Python frame per URL, and one
        # zlib call (which releases the GIL) instead of one per batch.
        records = list(chain.from_iterable(self.batches))
        moments = list(map(_lastmod_of, records))
        lastmods: list[int | None]
        if None in moments:
            lastmods = [None if m is None else int(m.timestamp()) for m in moments]
        else:
            lastmods = list(map(int, map(datetime.timestamp, moments)))
        blob = pack_urls(map(_url_of, records)) if records else None
        return SitemapRead(
            url=url,
            format=node.format or "unknown",
            hash=digest,
            records=len(self.keys),
            etag=self.etag,
            last_modified=self.last_modified,
            index_lastmod=to_seconds(node.lastmod),
            keys=list(self.keys),
            lastmods=lastmods,
            urls_blob=blob,
            children=self.children,
        )


#: The start of the problem a damaged part of the state gives (the sitemap is then read
#: in full as if it were new, and its state written again: the state heals).
STATE_DAMAGED = "the state file's record of this sitemap is damaged; read in full, rewritten"
#: What a damaged record of a sitemap costs besides (every part but its URL rows' lastmods).
REMOVALS_LOST = "the URLs that left it cannot be named as removed"
#: The problem of a loss found as the removals are resolved, at the end of the run.
REMOVED_UNNAMED = "removed URLs not named: the state file's record is damaged"


class SitemapWatch(Watch):
    """The state's view of one sitemap job: its stored row and its tracker."""

    __slots__ = ("key", "node", "owner", "stored", "tracker")

    tracks_duplicates = True

    def __init__(self, owner: IncrementalRun, node: SitemapNode) -> None:
        self.owner = owner
        self.node = node
        self.key = node_key(node.url)
        self.stored: StoredSitemap | None = None
        self.tracker: Tracker | None = None

    # -- before the fetch --------------------------------------------------------------

    def plan(self, node: SitemapNode) -> StoredChildren | None:
        """Look the sitemap up in the state before fetching it.

        Returns its stored children when its index lastmod is not newer than the stored
        one (the node is then marked unchanged and must not be fetched), else None
        (fetch it, with :meth:`headers`).
        """
        owner = self.owner
        self.key = node_key(node.url)
        stored = self.stored = owner.store.sitemap(self.key)
        damage = None if stored is None else stored.damage()
        if damage is not None:  # read as unknown: fetched in full, its state rewritten
            self.damaged(damage, lost=True)
            stored = self.stored = None
        if stored is None or not owner.trust_index_lastmod:
            return None
        new, old = to_seconds(node.lastmod), stored.index_lastmod
        if new is None or old is None or new > old:
            return None
        return self.not_modified(node, None)

    def headers(self) -> dict[str, str] | None:
        """Conditional request headers from the last complete read, if any."""
        stored = self.stored
        if stored is None:
            return None
        headers = {}
        if stored.etag:
            headers["If-None-Match"] = stored.etag
        if stored.last_modified:
            headers["If-Modified-Since"] = stored.last_modified
        return headers or None

    def not_modified(self, node: SitemapNode, status: int | None) -> StoredChildren | None:
        """Mark the node unchanged (no body read); its stored children (to walk)."""
        stored = self.stored
        if stored is None:
            return None
        node.unchanged = "not modified (304)" if status == 304 else "index lastmod not newer"
        node.format = stored.format
        node.complete = True
        node.urls = stored.records
        if status is not None:
            node.status = status
        return [(url, lastmod) for url, lastmod in stored.child_refs()]

    # -- while it streams --------------------------------------------------------------

    def begin(self, etag: str | None, last_modified: str | None) -> None:
        """A body is coming: start tracking it (and check the stored URL text it will be
        compared with: damaged, it is a problem, and the new read replaces it)."""
        self.tracker = Tracker(etag, last_modified)
        if self.stored is not None:
            damage = self.owner.store.urls_damage(self.key)
            if damage is not None:
                self.damaged(damage, lost=True)

    def damaged(self, what: str, *, lost: bool = False) -> None:
        """A damaged part of this sitemap's state: a named problem on its node (``lost``:
        the part that names its removed URLs, which this run cannot)."""
        message = f"{STATE_DAMAGED}: {what}" + (f"; {REMOVALS_LOST}" if lost else "")
        self.owner.damaged(self.node, self.key, message, lost=lost)

    def feed(self, chunk: bytes) -> None:
        """Hash a chunk of the body as received."""
        if self.tracker is not None:
            self.tracker.digest.update(chunk)

    def child(self, url: str, lastmod: datetime | None) -> None:
        """The sitemap (or robots.txt) lists a child sitemap."""
        key = node_key(url)
        self.owner.listed.add(key)
        if self.tracker is not None:
            self.tracker.children.append((key, to_seconds(lastmod)))

    def observe(self, batch: Batch, duplicates: Batch, uniform: bool) -> Batch:
        """Track a chunk's in-scope records; the records to emit.

        ``batch`` holds the records new to this run, ``duplicates`` those an earlier
        sitemap of this run already emitted (tracked, never emitted). A record whose
        lastmod moved forward gets the observed interval as its ``revisit`` (a new
        record: only these, and only when the sitemap's lastmods are not ``uniform``).
        """
        tracker = self.tracker
        if tracker is None:
            return batch
        if duplicates:
            tracker.add(duplicates)
        if not batch:
            return batch
        keys = tracker.add(batch)
        store = self.owner.store
        # ``batch`` holds URLs new to this run: on a first run none can be stored yet
        damaged = store.damaged_rows
        previous = {} if store.empty_at_start else store.lastmods(keys)
        if store.damaged_rows > damaged:
            self.damaged(f"{store.damaged_rows - damaged} URL rows hold no valid lastmod")
        if not previous:
            return batch  # every record is new to the state: no loop over them
        out: Batch = []
        unchanged = 0
        changed_only = self.owner.changed_only
        for record, key in zip(batch, keys, strict=True):
            if key not in previous:
                out.append(record)
                continue
            old = from_seconds(previous[key])
            lastmod = record.lastmod
            if lastmod is not None and (old is None or lastmod > old):
                if old is not None and not uniform:
                    interval = revisit_interval(record.changefreq, lastmod, old)
                    record = dataclasses.replace(record, revisit=interval)
                out.append(record)
            elif changed_only:
                unchanged += 1
            else:
                out.append(record)
        self.owner.stats.urls_unchanged += unchanged
        return out

    # -- after it ended ----------------------------------------------------------------

    def settle(self, node: SitemapNode, complete: bool) -> Checkpoint | None:
        """The write for a finished node (None when there is nothing to save).

        ``complete``: the body was read to its end and parsed without a fatal problem,
        and the run was not stopped meanwhile (so every record went out).
        """
        owner, key, stored, tracker = self.owner, self.key, self.stored, self.tracker
        self.tracker = None
        if node.unchanged is not None:
            return owner.unchanged_write(node, key, tracker)
        if tracker is None or not key:
            return None
        store = owner.store
        if not complete:
            if not node.failed or node.cut_short or not tracker.count:
                return None
            # It broke after listing URLs, which went out before this checkpoint runs:
            # they are seen (a next --changed-only run does not hand them out again).
            read = tracker.read
            return Checkpoint(lambda: owner.write(lambda: store.save_seen(read(key, node, None))))
        digest = tracker.digest.digest()
        if stored is not None and stored.hash == digest and stored.format == node.format:
            node.unchanged = "same content"
            return owner.unchanged_write(node, key, tracker)
        return Checkpoint(
            lambda: owner.write(lambda: store.save_read(tracker.read(key, node, digest)))
        )


class IncrementalRun(Observer):
    """One run's use of the state (see the module docstring): ``options`` say what to
    emit (``changed_only``, ``removed``) and whether an index's lastmod is trusted."""

    def __init__(
        self,
        store: StateStore,
        stats: Stats,
        options: Options = DEFAULT_OPTIONS,
        *,
        commit_each: bool = True,
    ) -> None:
        self.store = store
        self.stats = stats
        self.changed_only = options.incremental.changed_only
        self.removed = options.incremental.removed
        self.trust_index_lastmod = options.walk.trust_index_lastmod
        self.commit_each = commit_each
        self.listed: set[str] = set()
        #: The nodes watched, by key: where what the state lost is said.
        self.nodes: dict[str, SitemapNode] = {}
        #: The sitemaps whose removed URLs this run cannot name (their state was damaged).
        self.lost: set[str] = set()
        store.begin_run()

    def watch(self, node: SitemapNode) -> SitemapWatch:
        """The state's watch of one sitemap job."""
        self.nodes[node_key(node.url)] = node
        return SitemapWatch(self, node)

    def damaged(self, node: SitemapNode | None, key: str, message: str, *, lost: bool) -> None:
        """A damaged part of the state of the sitemap ``key``: a ``state-damaged`` problem
        on its node when it is in the run, and counted (``stats.sitemaps_state_lost``)
        when it costs the names of its removed URLs."""
        if node is not None:
            node.add_problem("state-damaged", message)
        if lost:
            self.lost.add(key)
            self.stats.sitemaps_state_lost = len(self.lost)

    def unchanged_write(self, node: SitemapNode, key: str, tracker: Tracker | None) -> Checkpoint:
        """The write of a sitemap found unchanged (its validators refreshed)."""
        self.stats.sitemaps_unchanged += 1
        etag = tracker.etag if tracker is not None else None
        modified = tracker.last_modified if tracker is not None else None
        index_lastmod = to_seconds(node.lastmod)

        def save() -> None:
            self.store.save_unchanged(
                key, etag=etag, last_modified=modified, index_lastmod=index_lastmod
            )

        return Checkpoint(lambda: self.write(save))

    def write(self, save: Callable[[], None]) -> Iterator[Batch]:
        """Queue a save for the state's writer thread (then its commit, in
        ``state_commit="sitemap"`` mode): in order, off the event loop."""
        store = self.store
        store.defer(save)
        if self.commit_each:
            store.defer(store.commit)
        return iter(())

    def finale(self) -> Checkpoint:
        """The last write: resolve removals (yielding removed records if asked for)."""
        return Checkpoint(self._finish)

    def _finish(self) -> Iterator[Batch]:
        self.store.flush()  # every sitemap's write is in before removals are resolved
        for batch in self.store.finish_run(self.listed):
            self.stats.urls_removed += len(batch)
            if self.removed:
                yield batch
        for key, (at, why) in self.store.take_lost().items():
            if key not in self.lost:  # found while resolving: said once per sitemap
                message = f"{REMOVED_UNNAMED}: {why}"
                self.damaged(self.nodes.get(at), key, message, lost=True)
        if self.commit_each:
            self.store.commit()

    def commit(self) -> None:
        """Commit whatever is written (the end of a run the consumer read to its end)."""
        self.store.flush()
        self.store.commit()

    def close(self) -> None:
        """Roll back what is not committed; close the state file."""
        self.store.close()
