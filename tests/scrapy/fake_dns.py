"""A resolver for Scrapy crawls in tests: made-up names resolve to 127.0.0.1, nothing else.

Set ``TWISTED_DNS_RESOLVER = "tests.scrapy.fake_dns.FakeResolver"``. Every name in
:data:`NAMES` is "on the internet" as far as the crawl knows, yet every connection stays on
this machine; any other name fails like NXDOMAIN, so no lookup ever leaves the process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer
from twisted.internet.abstract import isIPAddress
from twisted.internet.error import DNSLookupError

#: The made-up names, each answering 127.0.0.1.
NAMES: Final = frozenset({"public.example", "internal.example", "localhost"})


class FakeResolver(CachingThreadedResolver):
    """Scrapy's default resolver class, answering from :data:`NAMES` only."""

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> defer.Deferred[str]:
        """127.0.0.1 for a known name, a loopback literal as itself; a lookup error otherwise."""
        if name in NAMES:
            return defer.succeed("127.0.0.1")
        if name.startswith("127.") and isIPAddress(name):
            return defer.succeed(name)  # what gethostbyname does with a literal
        return defer.fail(DNSLookupError(f"no such host {name} (test resolver)"))
