"""Which answers are bot protection, not the site: named rules over a response's status,
headers, cookies, final URL and the first bytes of its body. Sans-I/O.

A site that has sitemaps but sits behind a bot wall answers robots.txt and sitemap URLs
with a challenge or a block page (or a redirect to a login form), which a reader would
otherwise call "not a sitemap" or "no sitemap". Each rule below names one documented
signature; a response matches a rule when one of its signals is present (and, where the
rule says so, with one of its statuses). A plain 403 with no signature is not a block: it
stays the server's refusal.

Signals, by provider (what each vendor documents or shows on its pages):

* Cloudflare: the ``cf-mitigated: challenge`` header of a challenge, the challenge and
  block pages' markup ("Just a moment...", ``challenge-platform``, ``cf_chl_opt``,
  "Attention Required! | Cloudflare"), the bot management cookie ``__cf_bm`` on a
  refusal.
* Akamai: ``Server: AkamaiGHost`` on a refusal, its "Access Denied ... Reference #" page,
  the bot manager's cookies (``_abck``, ``ak_bmsc``, ``bm_sz``).
* Imperva (Incapsula): the ``X-Iinfo`` header, ``X-CDN: Incapsula``, "Incapsula incident
  ID" and ``_Incapsula_Resource`` in the page, the ``visid_incap_`` and ``incap_ses_``
  cookies.
* DataDome: the ``X-DataDome`` and ``X-DD-B`` headers, the ``datadome`` cookie, the
  ``captcha-delivery.com`` challenge.
* HUMAN (PerimeterX): ``px-captcha``, ``_pxAppId``, ``perimeterx`` in the page, the
  ``_px3``/``_pxhd``/``_pxvid`` cookies.
* AWS WAF: the ``x-amzn-waf-action`` header (``captcha``, ``challenge``), ``awswaf`` in
  the page.
* Sucuri: ``X-Sucuri-ID``/``X-Sucuri-Block`` headers, ``Server: Sucuri/Cloudproxy``, the
  "Sucuri WebSite Firewall" page.
* Any provider: a 401/403/429/503 whose page is a CAPTCHA (reCAPTCHA, hCaptcha,
  Turnstile, "verify you are human"); a robots.txt or sitemap URL that redirects to a
  login page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

#: Bytes of a body looked at for a signature (block pages put theirs near the top).
BODY_BYTES: Final = 8 * 1024
#: Statuses a refusal or a challenge comes with (AWS WAF: 202 challenge, 405 CAPTCHA).
REFUSALS: Final = frozenset({202, 401, 403, 405, 406, 409, 429, 503})


@dataclass(frozen=True, slots=True)
class Block:
    """A response that is bot protection: the rule that matched, the words a person reads
    for it, and the signals that decided (a header, a cookie, a page's marker, the
    status)."""

    rule: str
    words: str
    signals: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """The block as JSON."""
        return {"rule": self.rule, "words": self.words, "signals": list(self.signals)}


@dataclass(frozen=True, slots=True)
class Rule:
    """One provider's signature: response header fields (name -> a pattern of the value),
    cookie names (prefixes), markers of its pages (lower-case bytes), and the statuses it
    needs (None: any; a field of the rule's own is proof on any status)."""

    name: str
    words: str
    fields: Mapping[str, str] = field(default_factory=dict)
    cookies: tuple[str, ...] = ()
    markers: tuple[bytes, ...] = ()
    statuses: frozenset[int] | None = REFUSALS
    #: The headers prove it whatever the status (they are only sent on a block).
    proof: bool = False


RULES: Final[tuple[Rule, ...]] = (
    Rule(
        "cloudflare-challenge",
        "Cloudflare challenge",
        fields={"cf-mitigated": "challenge"},
        markers=(b"<title>just a moment", b"challenge-platform", b"cf_chl_opt", b"cf-chl-"),
        proof=True,
    ),
    Rule(
        "cloudflare-block",
        "Cloudflare block",
        cookies=("__cf_bm",),
        markers=(b"attention required! | cloudflare", b"used cloudflare to restrict access"),
    ),
    Rule(
        "akamai",
        "Akamai bot manager",
        fields={"server": r"akamaighost"},
        cookies=("_abck", "ak_bmsc", "bm_sz"),
        markers=(b"you don't have permission to access", b"reference&#32;&#35;"),
    ),
    Rule(
        "imperva",
        "Imperva (Incapsula)",
        fields={"x-iinfo": "", "x-cdn": "incapsula"},
        cookies=("visid_incap_", "incap_ses_"),
        markers=(b"incapsula incident id", b"_incapsula_resource"),
    ),
    Rule(
        "datadome",
        "DataDome",
        fields={"x-datadome": "", "x-dd-b": ""},
        cookies=("datadome",),
        markers=(b"captcha-delivery.com",),
    ),
    Rule(
        "perimeterx",
        "HUMAN (PerimeterX)",
        cookies=("_px3", "_pxhd", "_pxvid"),
        markers=(b"px-captcha", b"_pxappid", b"perimeterx"),
    ),
    Rule(
        "aws-waf",
        "AWS WAF",
        fields={"x-amzn-waf-action": "captcha|challenge"},
        markers=(b"awswaf",),
        proof=True,
    ),
    Rule(
        "sucuri",
        "Sucuri firewall",
        fields={"x-sucuri-id": "", "x-sucuri-block": "", "server": "sucuri"},
        markers=(b"sucuri website firewall",),
    ),
    Rule(
        "captcha",
        "a CAPTCHA page",
        markers=(
            b"g-recaptcha",
            b"google.com/recaptcha",
            b"hcaptcha.com",
            b"h-captcha",
            b"cf-turnstile",
            b"verify you are human",
            b"are you a robot",
        ),
        statuses=frozenset({401, 403, 429, 503}),
    ),
)
#: A path that asks for a login: where a wall sends those it does not know.
_LOGIN: Final = re.compile(
    r"/(?:log-?in|sign-?in|signon|auth(?:enticate)?|sso|account/login|users/sign_in|"
    r"wp-login\.php|session/new)(?:[/.?]|$)",
    re.IGNORECASE,
)
_COOKIE_NAME: Final = re.compile(r"(?:^|,)\s*([^=;,\s]+)=")


def find_block(
    status: int | None,
    fields: Mapping[str, str],
    body: bytes = b"",
    *,
    asked: str | None = None,
    final: str | None = None,
) -> Block | None:
    """The bot protection a response is, or None (a real answer, or a refusal with no
    signature). ``body`` is the start of the body as it came (see :data:`BODY_BYTES`);
    ``asked`` and ``final`` are the URL asked for and the one the redirects ended at.

    >>> find_block(403, {"cf-mitigated": "challenge", "server": "cloudflare"}).rule
    'cloudflare-challenge'
    >>> find_block(403, {"server": "nginx"}, b"<h1>Forbidden</h1>") is None
    True
    >>> find_block(200, {}, b"<html>", asked="https://e.com/sitemap.xml",
    ...            final="https://e.com/login?next=/sitemap.xml").rule
    'login-redirect'
    """
    lower = joined(fields)
    page = body[:BODY_BYTES].lower()
    cookies = _cookie_names(lower.get("set-cookie", ""))
    for rule in RULES:
        signals = _signals(rule, lower, page, cookies)
        if not signals:
            continue
        by_header = any(s.split(":", 1)[0] in rule.fields for s in signals)
        if rule.statuses is None or status in rule.statuses or (rule.proof and by_header):
            return Block(rule.name, rule.words, (*signals, f"HTTP {status}"))
    if asked and final and final != asked and _LOGIN.search(urlsplit(final).path or "/"):
        return Block("login-redirect", "a login page", (f"redirected to {final}",))
    return None


def joined(fields: Mapping[str, str]) -> dict[str, str]:
    """Header fields by lower-case name, a multidict's repeated names (Set-Cookie) joined."""
    found: dict[str, str] = {}
    for name, value in fields.items():
        key = name.lower()
        found[key] = f"{found[key]}, {value}" if key in found else value
    return found


def _signals(
    rule: Rule, fields: Mapping[str, str], page: bytes, cookies: frozenset[str]
) -> tuple[str, ...]:
    found = [
        f"{name}: {fields[name]}"
        for name, pattern in rule.fields.items()
        if name in fields and re.search(pattern, fields[name], re.IGNORECASE)
    ]
    found += [
        f"cookie {cookie}" for cookie in cookies if cookie.startswith(rule.cookies) and rule.cookies
    ]
    found += [f"page: {marker.decode()}" for marker in rule.markers if marker in page]
    return tuple(found)


def _cookie_names(set_cookie: str) -> frozenset[str]:
    """The names of the cookies a response sets (all Set-Cookie headers, joined)."""
    return frozenset(name.lower() for name in _COOKIE_NAME.findall(set_cookie))
