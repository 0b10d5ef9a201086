"""Run a command beside CPU burners: ``python tests/burn.py N -- COMMAND...``.

``make test-stress`` runs the suite this way (N burners at the same priority as the
tests: a load average near N + the tests' own on two cores), to prove that no test's
verdict depends on the machine's speed. The burners are killed when the command ends,
however it ends; the load averages seen while it ran are printed with its exit status.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading


def _burn() -> None:
    while True:
        pass


def main(argv: list[str]) -> int:
    """Start the burners, run the command, stop the burners; the command's exit status."""
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(int(argv[0]))]
    for burner in burners:
        burner.start()
    loads: list[float] = []
    ended = threading.Event()

    def watch() -> None:
        while not ended.wait(30):
            loads.append(os.getloadavg()[0])

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        code = subprocess.call(argv[2:])
    finally:
        ended.set()
        for burner in burners:
            burner.kill()
    shown = f"{min(loads):.1f}-{max(loads):.1f}" if loads else "n/a (under 30 s)"
    print(f"--- beside {len(burners)} CPU burners: load average {shown}; exit {code}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
