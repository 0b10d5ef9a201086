"""sitemap_reader/errors.py: one exception tree, so a caller can catch everything the
library raises on purpose with one class (its shape is pinned in test_public_api.py)."""

from __future__ import annotations

import inspect

import pytest

from sitemap_reader import errors


def test_every_exception_has_the_one_root() -> None:
    """Each exception class the module defines is a SitemapReaderError."""
    classes = [
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__ == errors.__name__
    ]
    assert len(classes) >= 5
    assert all(issubclass(cls, errors.SitemapReaderError) for cls in classes)


def test_a_bad_argument_is_also_a_value_error() -> None:
    """UsageError (and StateError, a bad state file) can be caught as ValueError too."""
    with pytest.raises(ValueError, match="no such option"):
        raise errors.UsageError("no such option")
    with pytest.raises(errors.UsageError):
        raise errors.StateError("not a sitemap-reader state file")
