"""Run a command and write its peak resident set size (KiB) and CPU seconds to a file.

Usage: ``python rss_wrapper.py PEAK_FILE COMMAND [ARGS...]``. The command inherits the
standard streams; its exit status is passed on. ``os.wait4`` returns the resource usage
of exactly that child, so ``ru_maxrss`` is its own peak (Linux: in KiB) and
``ru_utime + ru_stime`` its own CPU time.
"""

from __future__ import annotations

import os
import subprocess
import sys


def main(argv: list[str]) -> int:
    """Run ``argv[1:]``, record its peak RSS and CPU time in ``argv[0]``; its exit status."""
    peak_file, command = argv[0], argv[1:]
    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # already reaped by wait4
    with open(peak_file, "w", encoding="ascii") as out:
        out.write(f"{usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}\n")
    return child.returncode if child.returncode >= 0 else 128 - child.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
