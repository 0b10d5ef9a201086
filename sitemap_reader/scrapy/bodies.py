"""A downloader middleware that keeps a sitemap body Scrapy would fail to gunzip.

A server may name and serve a plain sitemap like a gzip: a ``.gz`` name, a gzip type and
``Content-Encoding: gzip`` over bytes that were never compressed. The aiohttp reader reads
such a body as sent (the parse core sniffs gzip from the bytes, :mod:`sitemap_reader.parse
.sniff`), and so do the other readers (go-sitemap-parser, for one); Scrapy's
HttpCompressionMiddleware gunzips on the header's word and fails the request
(``BadGzipFile``). For discovery's own requests (robots.txt and sitemaps) only,
:class:`PlainBodyMiddleware` drops a gzip coding the body does not start with gzip's magic
bytes from the header before HttpCompressionMiddleware sees the response; the body then
reaches the parser as sent, which reads it for what it is. Real gzip bodies, other codings
and the spider's own requests are left to Scrapy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from scrapy import Request
from scrapy.http import Response

from sitemap_reader.parse.sniff import GZIP_MAGIC

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: Place in DOWNLOADER_MIDDLEWARES: responses pass the middlewares from the highest order
#: down, so this runs after RedirectMiddleware (600) and before HttpCompressionMiddleware
#: (590).
BODIES_ORDER: Final = 595
# discovery's request meta key (sitemap_reader.scrapy.driver.SITEMAP_META_KEY)
_SITEMAP_META: Final = "sitemap_reader_sitemap"
_GZIP: Final = frozenset({b"gzip", b"x-gzip"})


def enable(settings: BaseSettings) -> None:
    """Add the middleware to ``DOWNLOADER_MIDDLEWARES`` (an order already given is kept)."""
    settings.setdefault_in_component_priority_dict(
        "DOWNLOADER_MIDDLEWARES", PlainBodyMiddleware, BODIES_ORDER
    )


class PlainBodyMiddleware:
    """Downloader middleware: a sitemap body labelled gzip but not gzip is read as sent.

    ``DOWNLOADER_MIDDLEWARES = {"sitemap_reader.scrapy.bodies.PlainBodyMiddleware": 595}``
    (the Addon and the mixin add it themselves). See the module docstring.
    """

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        """The response, without the outer gzip coding its body does not have."""
        if _SITEMAP_META not in request.meta:
            return response
        codings = [
            token.strip().lower()
            for value in response.headers.getlist("Content-Encoding")
            for token in value.split(b",")
            if token.strip()
        ]
        if not codings or codings[-1] not in _GZIP or response.body.startswith(GZIP_MAGIC):
            return response
        headers = response.headers.copy()
        del headers["Content-Encoding"]
        if codings[:-1]:
            headers["Content-Encoding"] = b", ".join(codings[:-1])
        return response.replace(headers=headers)
