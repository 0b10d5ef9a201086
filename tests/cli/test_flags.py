"""cli/flags.py: the option flags derived from the declarations, and their refusals."""

from __future__ import annotations

import pytest

from sitemap_reader.cli.args import build_parser


def test_a_mistyped_choice_is_answered_by_the_flag_itself(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--scope hots: the flag's own type names the nearest choice (the usage layer used to
    read it back out of the converter's message with a regex)."""
    parser = build_parser(lambda a: 0, lambda a: 0, lambda a: 0)
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["dump", "x.example", "--scope", "hots"])
    first = capsys.readouterr().err.splitlines()[0]
    assert exited.value.code == 2
    assert first.endswith(
        "--scope: expected one of site, host, any, got 'hots' (did you mean 'host'?)"
    )
