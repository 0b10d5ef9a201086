"""Every option of a run, declared once: frozen groups by concern, and what derives from them.

Theory of operation
-------------------
An option is one field of a frozen dataclass, declared with :func:`option`: the
annotation is its type, then its default, a one-line meaning, the converter that turns
what a user passes into the value (and refuses the rest with a message), and which front
doors show it. Nothing else in the package spells an option out by hand:

* the Python keywords of :class:`~sitemap_reader.SitemapReader`, :func:`~sitemap_reader.iter_urls`,
  :class:`~sitemap_reader.SitemapLoader`, the Crawlee loader and the distributed worker
  are the field names (:meth:`Options.of` maps them onto the groups; a typed mirror for
  editors and mypy is generated into :mod:`sitemap_reader.options._keywords`, and a test keeps it
  in step);
* the CLI flags are ``--`` plus the name with dashes (:mod:`sitemap_reader.cli.flags`);
* the Scrapy settings are ``SITEMAP_READER_`` plus the name in capitals
  (:mod:`sitemap_reader.scrapy.settings`), unless a field says why Scrapy has its own;
* the option table of the docs (docs/reference/options.md) is rendered from here, and a
  test compares it.

After adding or changing an option, ``python -m sitemap_reader.options --write`` writes
the typed keywords and the option table again.

A value is converted once, where it enters (the group's constructor), with the same
converter for every door, so ``since="2026-01-01"``, ``--since 2026-01-01`` and
``SITEMAP_READER_SINCE = "2026-01-01"`` mean the same thing. A refused value is a
:class:`~sitemap_reader.errors.UsageError` naming the door and the option; an unknown
keyword names the door and suggests the nearest option.

The wing's rooms: :mod:`.declare` (how an option is declared, and the converters),
:mod:`.groups` (the groups and :class:`Options`), :mod:`.limits` (the bounds),
:mod:`.keywords` (flat keywords sorted onto groups, for every Python door), :mod:`.doors`
(how each door spells an option) and :mod:`.derive` (what is generated from the
declarations).
"""

from __future__ import annotations

from sitemap_reader.options.groups import (
    GROUPS,
    GROUPS_AND_LOADER,
    Delivery,
    Incremental,
    LoaderOptions,
    Network,
    Options,
    Parallelism,
    Politeness,
    Timeouts,
    Walk,
    default_user_agent,
)
from sitemap_reader.options.limits import Limits

__all__ = [
    "GROUPS",
    "GROUPS_AND_LOADER",
    "Delivery",
    "Incremental",
    "Limits",
    "LoaderOptions",
    "Network",
    "Options",
    "Parallelism",
    "Politeness",
    "Timeouts",
    "Walk",
    "default_user_agent",
]
