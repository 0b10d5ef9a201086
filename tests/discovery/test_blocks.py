"""discovery/blocks.py: bot protection told from the site, by named rules over recorded
response shapes (status, headers, cookies, page markup, final URL); a refusal with no
signature stays the server's refusal."""

from __future__ import annotations

import pytest

from sitemap_reader.discovery.blocks import RULES, find_block

#: (rule, status, headers, page) as each provider answers a bot (shapes recorded from the
#: providers' documented signals and their challenge and block pages).
SHAPES: list[tuple[str, int, dict[str, str], bytes]] = [
    (
        "cloudflare-challenge",
        403,
        {"Server": "cloudflare", "cf-mitigated": "challenge", "CF-RAY": "8a1b2c3d4e5f-AMS"},
        b"<!DOCTYPE html><html><head><title>Just a moment...</title>"
        b"<script src='/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1'></script>",
    ),
    (
        "cloudflare-challenge",
        503,
        {"Server": "cloudflare"},
        b"<html><head><title>Just a moment...</title></head><body>"
        b"<script>window._cf_chl_opt={cvId: '3'}</script>",
    ),
    (
        "cloudflare-block",
        403,
        {"Server": "cloudflare", "Set-Cookie": "__cf_bm=abc; path=/; HttpOnly"},
        b"<title>Attention Required! | Cloudflare</title><h1>Sorry, you have been blocked</h1>",
    ),
    (
        "akamai",
        403,
        {"Server": "AkamaiGHost", "Mime-Version": "1.0"},
        b"<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY><H1>Access Denied</H1>"
        b'You don\'t have permission to access "http&#58;&#47;&#47;e&#46;com&#47;sitemap.xml"'
        b" on this server.<P>Reference&#32;&#35;18&#46;1c2d</BODY></HTML>",
    ),
    (
        "imperva",
        403,
        {"X-Iinfo": "4-1234567-0 0NNN RT(1) q(0 -1 -1 -1) r(0 -1)", "X-CDN": "Incapsula"},
        b'<html><head><META NAME="robots" CONTENT="noindex,nofollow">'
        b'<script src="/_Incapsula_Resource?SWJIYLWA=5074a7"></script></head>'
        b"<body>Request unsuccessful. Incapsula incident ID: 1234-5678</body></html>",
    ),
    (
        "datadome",
        403,
        {"X-DataDome": "protected", "Set-Cookie": "datadome=AbC123; Max-Age=31536000"},
        b"<html><script>var dd={'cid':'x','host':'geo.captcha-delivery.com'}</script>",
    ),
    (
        "perimeterx",
        403,
        {"Set-Cookie": "_pxhd=abc:123; path=/"},
        b"<html><body><div id=\"px-captcha\"></div><script>window._pxAppId='PXabc';</script>",
    ),
    (
        "aws-waf",
        202,
        {"x-amzn-waf-action": "challenge", "Content-Type": "text/html"},
        b'<html><script src="https://x.token.awswaf.com/x/challenge.js"></script>',
    ),
    (
        "aws-waf",
        405,
        {"x-amzn-waf-action": "captcha"},
        b"<html><body>AwsWafIntegration.captcha</body></html>",
    ),
    (
        "sucuri",
        403,
        {"Server": "Sucuri/Cloudproxy", "X-Sucuri-ID": "11005", "X-Sucuri-Block": "BOT01"},
        b"<title>Sucuri WebSite Firewall - Access Denied</title>",
    ),
    (
        "captcha",
        429,
        {"Server": "nginx"},
        b'<html><body><div class="g-recaptcha" data-sitekey="6Lc"></div>'
        b"Please verify you are human</body></html>",
    ),
]


@pytest.mark.parametrize(("rule", "status", "headers", "page"), SHAPES, ids=[s[0] for s in SHAPES])
def test_each_provider_is_named_by_its_rule(
    rule: str, status: int, headers: dict[str, str], page: bytes
) -> None:
    """Each recorded shape is the block of its provider's rule, with the signals that
    decided and the status."""
    block = find_block(status, headers, page)
    assert block is not None and block.rule == rule
    assert f"HTTP {status}" in block.signals and len(block.signals) >= 2


def test_every_rule_has_a_recorded_shape() -> None:
    """No rule goes untested: each named rule (the login redirect apart) has a shape."""
    assert {r.name for r in RULES} == {shape[0] for shape in SHAPES}


@pytest.mark.parametrize(
    ("status", "headers", "page"),
    [
        (403, {"Server": "nginx"}, b"<html><h1>403 Forbidden</h1></html>"),
        (404, {"Server": "cloudflare", "CF-RAY": "1"}, b"<html>Not found</html>"),
        (200, {"Server": "cloudflare"}, b"<html><title>Just a moment...</title>"),
        (500, {"X-DataDome": "protected"}, b"<html>Internal Server Error</html>"),
        (503, {}, b"<html>Service Unavailable: maintenance</html>"),
    ],
    ids=["plain-403", "cloudflare-404", "soft-200", "datadome-500", "maintenance"],
)
def test_a_refusal_without_a_signature_is_no_block(
    status: int, headers: dict[str, str], page: bytes
) -> None:
    """A plain 403, a 404 or a 500 served through a provider (its header marks every
    answer), a challenge's words on a 200 page, a 503 for maintenance: the server's own
    answer, not a block."""
    assert find_block(status, headers, page) is None


def test_a_redirect_to_a_login_page_is_a_wall() -> None:
    """robots.txt or a sitemap that ends on a login form: a wall, whatever the status;
    a redirect elsewhere is not."""
    asked = "https://e.com/sitemap.xml"
    for final in ("https://e.com/login?next=/sitemap.xml", "https://sso.e.com/signin"):
        block = find_block(200, {}, b"<form>", asked=asked, final=final)
        assert block is not None and block.rule == "login-redirect"
    assert find_block(200, {}, b"<urlset/>", asked=asked, final="https://e.com/s.xml") is None


def test_cookies_are_read_from_every_set_cookie() -> None:
    """Two Set-Cookie headers of a multidict: the second's name counts too."""
    from multidict import CIMultiDict

    headers = CIMultiDict([("Set-Cookie", "a=1; Path=/"), ("Set-Cookie", "_pxvid=2; Path=/")])
    block = find_block(403, headers, b"")
    assert block is not None and block.rule == "perimeterx" and "cookie _pxvid" in block.signals
