"""safe_text: terminal escaping, CSV formula neutralising, URL credential redaction."""

from __future__ import annotations

import pytest

from sitemap_reader._safe_text import csv_cell, masked, printable, redact_url


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J\x1b[31mred", "\\x1b[2J\\x1b[31mred"),
        (
            "\x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\",
            "\\x1b]8;;http://evil/\\x1b\\click\\x1b]8;;\\x1b\\",
        ),
        ("ring\x07", "ring\\x07"),
        ("line\rover", "line\\x0dover"),
        ("two\nlines", "two\\x0alines"),
        ("c1\x9bcsi", "c1\\x9bcsi"),
        ("sep\u2028x", "sep\\u2028x"),
        ("bidi\u202eevil", "bidi\\u202eevil"),
        ("https://example.com/café?q=1", "https://example.com/café?q=1"),
    ],
)
def test_printable_escapes_controls(raw: str, shown: str) -> None:
    """ESC, OSC 8, BEL, CR, LF, C1, separators and bidi overrides are shown as escapes."""
    out = printable(raw)
    assert out == shown
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in out)


@pytest.mark.parametrize("lead", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cell_neutralises_formula_starts(lead: str) -> None:
    """Every OWASP formula lead character gets a quote; other text is untouched."""
    assert csv_cell(lead + "HYPERLINK(1)") == "'" + lead + "HYPERLINK(1)"
    assert csv_cell("plain" + lead) == "plain" + lead


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://u:pw@h:6379/1", "redis://u:***@h:6379/1"),
        ("redis://:pw@h", "redis://:***@h"),
        ("http://tok@proxy:3128", "http://***@proxy:3128"),
        ("http://proxy:3128", "http://proxy:3128"),
        ("http://[::1", "http://[::1"),
        ("http://u:pw@[::1", "<unparsable URL>"),
    ],
)
def test_redact_url_hides_passwords(url: str, shown: str) -> None:
    """A password never survives redaction, even in a URL that does not parse."""
    out = redact_url(url)
    assert out == shown
    assert "pw" not in out


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("http://crawler:pw@proxy:3128", "'http://crawler:***@proxy:3128'"),
        ("Cookie: a=1; b=2\n", "'Cookie: ***'"),
        ("t0ken\n", "<hidden text, length 6>"),
        ({"a.example": {"X-Key": "k"}}, "{'a.example': {'X-Key': <hidden text, length 1>}}"),
        (
            ["Cookie: a", ("X", "y")],
            "['Cookie: ***', (<hidden text, length 1>, <hidden text, length 1>)]",
        ),
        ((3, None, True), "(3, None, True)"),
        (b"raw", "<hidden bytes>"),
    ],
)
def test_masked_hides_every_credential(value: object, shown: str) -> None:
    """masked: URLs keep all but the password, Name: value lines their name, other text its
    length; mappings keep their keys, sequences their shape."""
    assert masked(value) == shown
