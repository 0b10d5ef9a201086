"""How an option is declared: :func:`option`, its :class:`Spec`, and the converters.

A field declared with :func:`option` carries, beside its type and default, its one-line
meaning, the converter that turns what a user passes into the value, and which front
doors show it (see :mod:`sitemap_reader.options` for the groups and what derives from
them). A group is :class:`Declared`: its ``__post_init__`` converts every field, the
one place a value is checked, whichever door it came through. Sans-I/O: nothing here
imports asyncio or aiohttp.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Final, Literal, TypeAlias
from urllib.parse import urlsplit

from yarl import URL

from sitemap_reader._safe_text import masked, printable, redact_url
from sitemap_reader.errors import UsageError


class OptionError(UsageError):
    """A value an option refuses; ``name`` is the option, ``reason`` says what was wanted,
    ``door`` (once known) the front door it came through. A door that shows it renders
    the option its own way (the CLI names the flag) from these, never from the text."""

    def __init__(self, name: str, reason: str, door: str | None = None) -> None:
        super().__init__(f"{door}: {name}: {reason}" if door else f"{name}: {reason}")
        self.name = name
        self.reason = reason
        self.door = door

    def at(self, door: str) -> OptionError:
        """The same refusal, as it came through ``door``."""
        return OptionError(self.name, self.reason, door)


Convert = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Spec:
    """What :func:`option` records about a field besides its type and default.

    ``cli`` and ``scrapy`` are True when the door shows the option, or a string saying
    why it does not. ``flag`` replaces the derived CLI flag; a boolean whose default is
    True gets a flag that turns it off (``--no-NAME`` unless ``flag`` says otherwise).
    ``repeat``: the flag may be given many times (the values make a list). ``const``:
    the flag may stand alone, meaning ``const``. ``setting`` names Scrapy's own setting
    read for the option instead of ``SITEMAP_READER_NAME``. ``accepts`` is the type a
    Python caller may pass, when wider than the field's (the converter narrows it).
    ``per_target``: one target of a run may have a value of its own (``per_target=``).
    ``loader`` is True when :class:`~sitemap_reader.SitemapLoader` (and so the Crawlee
    loader) takes the option, or a string saying why it does not: the loader refuses a
    value other than the default, with that reason. ``common``: a command's short
    ``--help`` describes its flag (the others it only names; ``--help-all`` describes all).
    """

    help: str
    convert: Convert | None = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    cli: bool | str = True
    flag: str | None = None
    repeat: bool = False
    const: object = None
    scrapy: bool | str = True
    setting: str | None = None
    accepts: str | None = None
    per_target: bool = False
    loader: bool | str = True
    common: bool = False


def option(
    default: Any,
    help: str,
    *,
    convert: Convert | None = None,
    metavar: str | None = None,
    choices: tuple[str, ...] | None = None,
    cli: bool | str = True,
    flag: str | None = None,
    repeat: bool = False,
    const: object = None,
    scrapy: bool | str = True,
    setting: str | None = None,
    accepts: str | None = None,
    per_target: bool = False,
    loader: bool | str = True,
    common: bool = False,
) -> Any:
    """A field declared once (see the module docstring and :class:`Spec`)."""
    spec = Spec(
        help, convert, metavar, choices, cli, flag, repeat, const, scrapy, setting, accepts,
        per_target, loader, common,
    )  # fmt: skip
    return field(default=default, metadata={"option": spec})


def spec_of(item: dataclasses.Field[Any]) -> Spec:
    """The :class:`Spec` of a declared field."""
    spec = item.metadata.get("option")
    if not isinstance(spec, Spec):
        raise TypeError(f"{item.name} is not declared with option()")
    return spec


def convert_value(item: dataclasses.Field[Any], given: object) -> object:
    """``given`` read by the converter of the option ``item``; a refusal is an
    :class:`OptionError` naming the option."""
    convert = spec_of(item).convert
    if convert is None:
        return given
    try:
        return convert(given)
    except OptionError:
        raise
    except (TypeError, ValueError) as exc:
        raise OptionError(item.name, str(exc)) from None


def converted(value: object) -> dict[str, Any]:
    """Each field's converter run on a freshly built group: the values that changed, by
    name. Raises :class:`OptionError` naming the field."""
    changed: dict[str, Any] = {}
    for item in dataclasses.fields(value):  # type: ignore[arg-type]
        given = getattr(value, item.name)
        result = convert_value(item, given)
        if result is not given:
            changed[item.name] = result
    return changed


class Declared:
    """The base of a frozen group of options: its ``__post_init__`` converts every field
    (the one place values are checked, whichever door they came through)."""

    __slots__ = ()

    def __post_init__(self) -> None:
        for name, value in converted(self).items():
            object.__setattr__(self, name, value)


# --------------------------------------------------------------------------- converters


def _shown(value: object) -> str:
    """A refused value as an error message quotes it: a long string cut, a huge integer
    by its size (``repr`` of one past 4,300 digits raises)."""
    if isinstance(value, int) and value.bit_length() > _SHOWN_BITS:
        return f"an integer of about {int(value.bit_length() * math.log10(2)):,} digits"
    return (
        repr(value) if not isinstance(value, str) or len(value) < 80 else repr(value[:77] + "...")
    )


#: Integers past this many bits are quoted by their size (:func:`_shown`).
_SHOWN_BITS = 128
#: The largest whole number an option takes: what SQLite's INTEGER and the C code under
#: zlib, sockets and timers hold (2**63 - 1); a larger one is no bound anyone means.
COUNT_MAX: Final = 2**63 - 1
#: The most seconds a time option takes: about 31 years, past any run, and well within
#: what the C timers under the event loop and threads hold (about 292 years).
SECONDS_MAX: Final = 1e9


def boolean(value: object) -> bool:
    """A boolean; the words a settings file or an environment uses are read too.

    >>> boolean(True), boolean("no"), boolean("1")
    (True, False, True)
    """
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", None) == "b":
        return bool(value)  # NumPy's booleans (a pandas column) say so by their dtype
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("true", "yes", "on", "1"):
            return True
        if word in ("false", "no", "off", "0", ""):
            return False
    raise ValueError(f"expected True or False, got {_shown(value)}")


def _number(value: object, kind: type[int] | type[float]) -> float:
    """``value`` as an int or a float: a Python number, any number type that says it is
    one (NumPy's, read from a pandas column), or its text. Infinities, fractions (as an
    int) and numbers no float holds are refused here (ValueError), never an
    OverflowError; an integral value is read exactly."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {value!r}")
    try:
        if isinstance(value, str):
            return kind(value.strip().replace("_", ""))
        if isinstance(value, numbers.Integral):
            return kind(int(value))
        if isinstance(value, numbers.Real):
            number = float(value)
            if kind is int and not number.is_integer():
                raise ValueError(number)
            return kind(number)
    except (ValueError, OverflowError):
        pass
    raise ValueError(f"expected a number, got {_shown(value)}")


def seconds(*, optional: bool = False, zero: bool = False) -> Convert:
    """Seconds: a number (or a numeric string) > 0, or >= 0 with ``zero``; None when
    ``optional``. Never infinite or NaN.

    >>> seconds()("60"), seconds(optional=True)(None)
    (60.0, None)
    """
    what = "seconds, a number >= 0" if zero else "seconds, a number > 0"

    def convert(value: object) -> float | None:
        if value is None and optional:
            return None
        try:
            number = _number(value, float)
        except ValueError:
            raise ValueError(f"expected {what}, got {_shown(value)}") from None
        if not math.isfinite(number) or number < 0 or (number == 0 and not zero):
            raise ValueError(f"expected {what}, got {_shown(value)}")
        if number > SECONDS_MAX:
            raise ValueError(f"expected {what} and at most {SECONDS_MAX:.0e}, got {_shown(value)}")
        return number

    return convert


def count(low: int, *, high: int | None = None, optional: bool = False) -> Convert:
    """A whole number >= ``low`` (and <= ``high``; a numeric string too); None when
    ``optional``.

    >>> count(1)("16")
    16
    """
    what = f"a whole number >= {low}" if high is None else f"a whole number from {low} to {high}"
    top = COUNT_MAX if high is None else high

    def convert(value: object) -> int | None:
        if value is None and optional:
            return None
        try:
            number = int(_number(value, int))
        except ValueError:
            raise ValueError(f"expected {what}, got {_shown(value)}") from None
        if number < low or number > top:
            shown = what if number < low or high is not None else f"{what} below 2**63"
            raise ValueError(f"expected {shown}, got {_shown(value)}")
        return number

    return convert


def choice(*values: str | None) -> Convert:
    """One of ``values`` (case-insensitive for strings)."""
    words = [v for v in values if v is not None]

    def convert(value: object) -> str | None:
        if value is None and None in values:
            return None
        if isinstance(value, str) and value.strip().lower() in words:
            return value.strip().lower()
        raise ValueError(f"expected one of {', '.join(words)}, got {_shown(value)}")

    return convert


def name_or_function(*names: str) -> Convert:
    """One of ``names`` (case-insensitive), or a function as given (a policy of the
    caller's own).

    >>> name_or_function("hosts", "intake")("Hosts"), name_or_function("a")(len) is len
    ('hosts', True)
    """

    def convert(value: object) -> object:
        if callable(value):
            return value
        if isinstance(value, str) and value.strip().lower() in names:
            return value.strip().lower()
        shown = ", ".join(repr(n) for n in names)
        raise ValueError(f"expected {shown} or a function, got {_shown(value)}")

    return convert


def moment(value: object) -> datetime | None:
    """An aware UTC datetime from a datetime, a date or an ISO 8601 string (a date or a
    datetime; UTC unless it has an offset), from year 1 to 9999 in UTC; None stays None.

    >>> moment("2024-03-05").isoformat()
    '2024-03-05T00:00:00+00:00'
    >>> moment("2024-03-05T14:30:00+02:00").isoformat()
    '2024-03-05T12:30:00+00:00'
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            value = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
        except ValueError:
            raise ValueError(
                f"expected an ISO date or datetime (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ), "
                f"got {_shown(text)}"
            ) from None
    elif isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise ValueError(f"expected a date, a datetime or an ISO 8601 string, got {_shown(value)}")
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:  # its offset moves it past year 1 or 9999 in UTC
        raise ValueError(
            f"expected a moment from year 1 to 9999 in UTC, got {value.isoformat()}"
        ) from None


def patterns(value: object) -> tuple[re.Pattern[str], ...]:
    """Regexes from strings or compiled ones; one alone is a list of one.

    >>> [p.pattern for p in patterns("/blog/")]
    ['/blog/']
    """
    items = [value] if isinstance(value, str | re.Pattern) else value
    if not isinstance(items, Iterable):
        raise ValueError(f"expected regular expressions, got {_shown(value)}")
    compiled: list[re.Pattern[str]] = []
    for item in items:
        if isinstance(item, re.Pattern):
            compiled.append(item)
            continue
        if not isinstance(item, str):
            raise ValueError(f"a pattern is a string or a compiled regex, not {_shown(item)}")
        try:
            compiled.append(re.compile(item))
        except re.error as exc:
            raise ValueError(f"bad regular expression {item!r}: {exc}") from None
    return tuple(compiled)


#: ``follow``: regexes, or a function of a child sitemap's URL.
FollowRule: TypeAlias = tuple[re.Pattern[str], ...] | Callable[[str], bool]


def follow_rule(value: object) -> FollowRule:
    """``follow``: a function ``url -> bool`` as given, else :func:`patterns`.

    >>> [p.pattern for p in follow_rule(["/blog/"])], follow_rule(str.isascii)("x")
    (['/blog/'], True)
    """
    if callable(value) and not isinstance(value, re.Pattern):
        return value
    return patterns(value)


def follows(rule: FollowRule, url: str) -> bool:
    """Whether ``rule`` (see :func:`follow_rule`) lets an index's child ``url`` be read:
    an empty tuple lets every child be, patterns when one matches."""
    if callable(rule):
        return bool(rule(url))
    return not rule or any(p.search(url) for p in rule)


def url_paths(value: object) -> tuple[str, ...] | None:
    """URL paths, each starting with ``/``: a sequence, or one comma-separated string.

    >>> url_paths("/a.xml, /b.xml")
    ('/a.xml', '/b.xml')
    """
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, Iterable):
        raise ValueError(f"expected URL paths, got {_shown(value)}")
    paths = tuple(str(p).strip() for p in items if str(p).strip())
    bad = [p for p in paths if not p.startswith("/")]
    if not paths or bad:
        raise ValueError(f"expected paths starting with '/', got {_shown(value)}")
    return paths


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def header_pairs(value: object) -> tuple[tuple[str, str], ...]:
    """Request headers as (name, value) pairs: from a mapping, pairs, or ``"Name: value"``
    lines; a name given twice joins its values with ``", "``. A name is an HTTP token,
    a value one line of text.

    >>> header_pairs(["Cookie: a=1", "Cookie: b=2", "X-A: 1"])
    (('Cookie', 'a=1, b=2'), ('X-A', '1'))
    """
    if value is None:
        return ()
    items: Iterable[Any] = value.items() if isinstance(value, Mapping) else value  # type: ignore[assignment]
    if isinstance(value, str) or not isinstance(items, Iterable):
        items = [value]
    joined: dict[str, str] = {}
    for item in items:
        if isinstance(item, str):
            name, colon, text = item.partition(":")
            if not colon:
                raise ValueError(f"expected 'Name: value', got {masked(item)}")
            name, text = name.strip(), text
        elif isinstance(item, tuple) and len(item) == 2:
            name, text = item
        else:
            raise ValueError(f"expected 'Name: value', got {masked(item)}")
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            raise ValueError(f"not a header name: {masked(name)}")
        if not isinstance(text, str) or any(c in text for c in "\r\n\0"):
            raise ValueError(f"header {name}: a value is one line of text, not {masked(text)}")
        text = text.strip()
        joined[name] = f"{joined[name]}, {text}" if name in joined else text
    return tuple(joined.items())


def proxy_url(value: object) -> str | None:
    """An ``http(s)://[user:password@]host[:port]`` proxy URL (a refused one is shown with
    its password hidden)."""
    if value is None:
        return None
    url = None
    if isinstance(value, str):
        try:
            url = URL(value)
        except ValueError:
            url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"a proxy is an http:// URL, not {masked(value)}")
    return str(value)


def redis_url(value: object) -> str | None:
    """A Redis URL redis-py reads as meant (``redis://``, ``rediss://``, ``unix://``), or
    None; a refused one is shown with its password hidden.

    >>> redis_url("redis://:pw@127.0.0.1:6379/2")
    'redis://:pw@127.0.0.1:6379/2'
    >>> redis_url("redis://host/notadb")
    Traceback (most recent call last):
    ValueError: not a Redis database number in redis://host/notadb
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"a Redis URL is text, not {masked(value)}")
    shown = printable(redact_url(value))
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise ValueError(f"not a Redis URL: {shown}") from None
    if parts.scheme == "unix":
        if not parts.path:
            raise ValueError(f"no socket path in {shown}")
        return value
    if parts.scheme not in ("redis", "rediss"):
        raise ValueError(f"not a Redis URL (redis://, rediss:// or unix://): {shown!r}")
    if not parts.hostname:
        raise ValueError(f"no host in {shown}")
    if port == 0:
        raise ValueError(f"not a port in {shown}")
    if parts.path not in ("", "/") and not parts.path[1:].isdigit():
        raise ValueError(f"not a Redis database number in {shown}")
    return value


#: The values of the ``allow_private`` option: None or False (the default), True, "never".
PrivateSetting: TypeAlias = bool | Literal["never"] | None


def private_policy(value: object) -> bool | Literal["never"]:
    """``allow_private``: False (and None) is the default, True allows every address,
    ``"never"`` refuses private addresses even for the typed targets.

    >>> private_policy(None), private_policy("yes"), private_policy("never")
    (False, True, 'never')
    """
    if value is None:
        return False
    if isinstance(value, str) and value.strip().lower() == "never":
        return "never"
    try:
        return boolean(value)
    except ValueError:
        raise ValueError(f"expected True, False or 'never', got {_shown(value)}") from None


def html_mode(value: object) -> str | None:
    """``html``: True means ``"fallback"``; False and None mean off.

    >>> html_mode(True), html_mode("always"), html_mode(False)
    ('fallback', 'always', None)
    """
    if value is None or value is False:
        return None
    if value is True:
        return "fallback"
    if isinstance(value, str) and value.strip().lower() in ("fallback", "always"):
        return value.strip().lower()
    try:
        return "fallback" if boolean(value) else None
    except ValueError:
        raise ValueError(
            f"expected True, 'fallback', 'always' or False, got {_shown(value)}"
        ) from None


def text_line(value: object) -> str | None:
    """One line of text (None stays None)."""
    if value is None:
        return None
    if not isinstance(value, str) or any(c in value for c in "\r\n\0"):
        raise ValueError(f"expected one line of text, got {_shown(value)}")
    return value


def file_path(value: object) -> str | None:
    """A file path (str or ``os.PathLike``) as a string; None stays None."""
    if value is None:
        return None
    if isinstance(value, str | os.PathLike):
        return os.fspath(value)
    raise ValueError(f"expected a file path, got {_shown(value)}")


def callable_or_none(value: object) -> object:
    """A function, or None."""
    if value is not None and not callable(value):
        raise ValueError(f"expected a function, got {_shown(value)}")
    return value
