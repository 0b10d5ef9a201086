"""Shared test helpers: parse a body whole, in chunks and one byte at a time; a closed port."""

from __future__ import annotations

import contextlib
import datetime
import gzip
import ipaddress
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.parser import ParseResult, SitemapParser
from sitemap_reader.records import SitemapRef, UrlRecord


def feed_chunks(
    body: bytes,
    size: int,
    url: str | None = None,
    *,
    strict: bool = False,
    limits: Limits | None = None,
) -> ParseResult:
    """Feed ``body`` in pieces of ``size`` bytes and collect everything."""
    parser = SitemapParser(url, strict=strict, limits=limits)
    items: list[UrlRecord | SitemapRef] = []
    for start in range(0, len(body), size):
        items.extend(parser.feed(body[start : start + size]))
    items.extend(parser.close())
    result = ParseResult(parser.format, problems=parser.problems, complete=parser.complete)
    result.urls = [i for i in items if isinstance(i, UrlRecord)]
    result.sitemaps = [i for i in items if isinstance(i, SitemapRef)]
    return result


def summary(result: ParseResult) -> tuple[Any, ...]:
    """What must be identical however a body is chunked (scores depend on the clock)."""
    return (
        result.format,
        [
            (u.url, u.lastmod, u.changefreq, u.priority, u.alternates, u.images, u.videos, u.news)
            for u in result.urls
        ],
        result.sitemaps,
        [(p.code, p.count, p.fatal) for p in result.problems],
        result.complete,
    )


def parse_all_ways(
    body: bytes,
    url: str | None = "https://example.com/sitemap.xml",
    *,
    strict: bool = False,
    limits: Limits | None = None,
) -> ParseResult:
    """Parse whole, in 7-byte chunks and byte by byte; assert identical results."""
    whole = feed_chunks(body, max(len(body), 1), url, strict=strict, limits=limits)
    for size in (7, 1):
        other = feed_chunks(body, size, url, strict=strict, limits=limits)
        assert summary(other) == summary(whole), f"chunk size {size} differs"
    return whole


def gz(data: bytes) -> bytes:
    """gzip ``data`` with a fixed mtime (reproducible)."""
    return gzip.compress(data, mtime=0)


def urlset(*entries: str, ns: str = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"') -> bytes:
    """A urlset document around raw ``<url>`` entry strings."""
    body = "".join(entries)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {ns}>{body}</urlset>'.encode()


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A loopback TCP port that refuses connections, for the block: bound and never
    listened on, so it stays closed and nobody else gets it meanwhile (a port bound and
    released at once may go to the next server any test starts, on any worker)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def self_signed(tmp_path: Path) -> ssl.SSLContext:
    """A TLS server context with a self-signed certificate for 127.0.0.1."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_path, key_path)
    return context
