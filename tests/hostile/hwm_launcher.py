"""Run the sitemap-reader CLI in this very process and record its own peak memory.

Usage: ``python hwm_launcher.py PEAK_FILE ARGS...`` runs ``sitemap-reader ARGS...``. At
exit the process reads ``VmHWM`` (its peak resident set, KiB) from ``/proc/self/status``
and writes it to PEAK_FILE, with its CPU seconds: the high-water mark of exactly this
process, which no parent or fork can inflate (``ru_maxrss`` of a forked child may include
the parent's).
"""

from __future__ import annotations

import atexit
import resource
import sys


def _record(path: str) -> None:
    """Write this process's VmHWM (KiB) and CPU seconds to ``path``."""
    with open("/proc/self/status", encoding="ascii") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with open(path, "w", encoding="ascii") as out:
        out.write(f"{peak} {usage.ru_utime + usage.ru_stime}\n")


def main(argv: list[str]) -> int:
    """Run the CLI on ``argv[1:]``; its exit code. The peak goes to ``argv[0]``."""
    atexit.register(_record, argv[0])
    from sitemap_reader.cli import main as cli_main

    return cli_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
