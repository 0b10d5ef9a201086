"""The writer thread of a state store opened with ``background=True``.

The aiohttp reader saves each sitemap's state off its event loop: the store queues each
write here (:meth:`~sitemap_reader.store.state.StateStore.defer`), and one thread runs them
in the order they came, so a commit never overtakes the save it follows. A write that
fails is kept and raised to the caller by the next :meth:`Writer.put` or :meth:`Writer.wait`;
until then the writes queued after it are skipped, not run on a state that missed one.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable


class Writer:
    """The writer thread of a store: runs deferred writes in order, keeps the first error."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self._done = threading.Condition()
        self._queued = 0
        self._finished = 0
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="sitemap-state", daemon=True)
        self._thread.start()

    def put(self, call: Callable[[], object]) -> None:
        """Queue ``call``; first raise the error of an earlier write, if one failed."""
        self._raise()
        with self._done:
            self._queued += 1
        self._jobs.put(call)

    def wait(self) -> None:
        """Wait until every write queued so far ran; raise the error of one that failed."""
        with self._done:
            target = self._queued
            self._done.wait_for(lambda: self._finished >= target)
        self._raise()

    def stop(self) -> None:
        """Finish what is queued, then end the thread (its error, if any, is dropped:
        the caller is closing, and an uncommitted write is rolled back anyway)."""
        self._jobs.put(None)
        self._thread.join()

    def _raise(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _run(self) -> None:
        while (call := self._jobs.get()) is not None:
            try:
                if self._error is None:  # after a failure, later writes are skipped
                    call()
            except BaseException as exc:
                self._error = exc
            with self._done:
                self._finished += 1
                self._done.notify_all()
