"""A fork server for the CLI tests: ``sitemap_reader.cli`` imported once, each run a fork.

Why: a run of ``sitemap-reader`` spends about 0.5 s of CPU importing (aiohttp, the
discovery core...) before it reads a byte, and the suite runs it hundreds of times, two
cores shared by four workers. Forked from a process that imported it already, a run
starts in milliseconds and is still a process of its own, with the caller's argv,
environment, working directory, umask, resource limits and standard streams, and its
exit status (or the signal that ended it) handed back to the caller.

Three processes per run, none of them a stand-in for the CLI's code:

- the test starts :data:`SHIM` exactly as it would start the console script: a short
  script under ``python -S`` (no site-packages: a few milliseconds);
- the shim connects to the *zygote* of this pytest worker (``$SITEMAP_READER_TEST_ZYGOTE``),
  sends its argv, environment, cwd, umask and limits, and passes its fds 0, 1 and 2;
- the zygote forks the *child*, which takes the fds and the context over and runs
  ``sitemap_reader.cli.main()`` as the console script does; the zygote reaps it
  (``wait4``) and sends back the status, the child's peak RSS and its CPU time.

Signals a test sends the shim (INT, TERM, HUP, QUIT, USR1, USR2) go on to the child; a
shim killed outright closes its connection, and the zygote kills the child. The shim
execs the real console script instead (same pid) whenever the zygote cannot give a
faithful run: no zygote, no connection, a Python or locale variable of the environment
that differs from the zygote's (the interpreter reads those once, at start), or another
namespace or root (``unshare``, ``chroot``: a fork lives in the zygote's).
What a fork cannot give: a fresh hash seed per run (all runs of a worker share one).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import selectors
import signal
import socket
import struct
import sys
from pathlib import Path
from typing import Any, NoReturn, TextIO

#: Environment variable naming the zygote's socket.
SOCKET_VAR = "SITEMAP_READER_TEST_ZYGOTE"
#: Environment variable naming a file the shim writes the child's peak RSS (KiB) and CPU
#: seconds into.
PEAK_VAR = "SITEMAP_READER_TEST_PEAK_FILE"
#: The console script the shim falls back to.
REAL = str(Path(sys.executable).parent / "sitemap-reader")
#: The shim: an executable named like the console script, written once per venv.
SHIM = str(Path(sys.executable).parent.parent / "cli-shim" / "sitemap-reader")
#: Signals the shim hands on to the child.
FORWARDED = (
    signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
)  # fmt: skip
_LIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))
_HEADER = struct.Struct("!I")


def write_shim() -> str:
    """Write :data:`SHIM` (atomically: workers may do it at once); its path."""
    here = str(Path(__file__).resolve().parent)
    text = (
        f"#!{sys.executable} -S\n"
        f"import sys\nsys.path.insert(0, {here!r})\n"
        "import cli_zygote\ncli_zygote.shim_main()\n"
    )
    path = Path(SHIM)
    if path.is_file() and path.read_text() == text:
        return SHIM
    path.parent.mkdir(exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(text)
    temporary.chmod(0o755)
    os.replace(temporary, path)
    return SHIM


def _places() -> dict[str, str]:
    """The namespaces (mount, network, user...) and the root this process lives in."""
    folder = "/proc/self/ns"
    names = os.listdir(folder) if os.path.isdir(folder) else []
    places = {name: os.readlink(f"{folder}/{name}") for name in names}
    return {**places, "root": os.path.realpath("/proc/self/root")}


def _interpreter_env(env: dict[str, str]) -> dict[str, str]:
    """The variables read once when an interpreter starts, or as its modules import."""
    return {
        k: v
        for k, v in env.items()
        if k.startswith(("PYTHON", "LC_"))
        or k in ("LANG", "LANGUAGE")
        or k.endswith("_NO_EXTENSIONS")
    }


# --------------------------------------------------------------------------- framing


def _send(sock: socket.socket, message: object, fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    frame = _HEADER.pack(len(data)) + data
    if fds:
        socket.send_fds(sock, [frame], fds)
    else:
        sock.sendall(frame)


def _receive(sock: socket.socket, *, fds: int = 0) -> tuple[Any, list[int]]:
    """One frame (and up to ``fds`` file descriptors); (None, []) at end of stream."""
    data, received = b"", list[int]()
    while len(data) < _HEADER.size or len(data) < _HEADER.size + _HEADER.unpack_from(data)[0]:
        if fds and not received:
            chunk, received, _, _ = socket.recv_fds(sock, 1 << 16, fds)
        else:
            chunk = sock.recv(1 << 16)
        if not chunk:
            for fd in received:
                os.close(fd)
            return None, []
        data += chunk
    return json.loads(data[_HEADER.size :]), list(received)


# --------------------------------------------------------------------------- the shim


def shim_main() -> NoReturn:
    """The shim's program (see the module docstring); never returns."""
    path = os.environ.get(SOCKET_VAR)
    if not path:
        _exec_real()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        umask = os.umask(0)
        os.umask(umask)
        limits = [[n, *resource.getrlimit(n)] for n in _LIMITS]
        request = {
            "argv": [REAL, *sys.argv[1:]],
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "places": _places(),
        }
        _send(sock, {**request, "umask": umask, "limits": limits}, [0, 1, 2])
        answer, _ = _receive(sock)
    except OSError:
        answer = None
    if not isinstance(answer, dict) or "pid" not in answer:
        sock.close()
        _exec_real()  # refused (an environment the zygote cannot give) or no zygote
    _release_streams()
    _forward_signals(int(answer["pid"]))
    status, _ = _receive(sock)
    sock.close()
    if not isinstance(status, dict):
        os._exit(1)  # the zygote went away
    peak = os.environ.get(PEAK_VAR)
    if peak:
        Path(peak).write_text(f"{status['maxrss']} {status['cpu']}\n")
    if status.get("signal"):
        number = int(status["signal"])
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(int(status["exit"]))


def _exec_real() -> NoReturn:
    os.execv(REAL, [REAL, *sys.argv[1:]])


def _release_streams() -> None:
    """The child has fds 0-2 now: hold no copy that would keep a pipe open."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _forward_signals(pid: int) -> None:
    def forward(number: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):  # it ended: its status is on the way
            os.kill(pid, number)

    for number in FORWARDED:
        signal.signal(number, forward)


# --------------------------------------------------------------------------- the zygote


def serve(path: str) -> None:
    """The zygote's program: import the CLI, then fork a child per request."""
    import sitemap_reader.cli  # noqa: F401  (the point: imported once, before any fork)

    own = (_interpreter_env(dict(os.environ)), _places())
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    select = selectors.DefaultSelector()
    select.register(listener, selectors.EVENT_READ)
    select.register(wake_r, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}
    print("ready", flush=True)
    try:
        while True:
            for key, _ in select.select():
                if key.fileobj is listener:
                    conn, _ = listener.accept()
                    fds = [listener.fileno(), select.fileno(), wake_r, wake_w]
                    pid = _fork(conn, own, fds + [c.fileno() for c in children.values()])
                    if pid:
                        children[pid] = conn
                        select.register(conn, selectors.EVENT_READ, pid)
                elif key.fileobj == wake_r:
                    os.read(wake_r, 4096)
                    _reap(children, select)
                else:  # a shim's end closed before its child ended: the shim was killed
                    os.kill(key.data, signal.SIGKILL)
                    select.unregister(key.fileobj)
    finally:
        for pid in children:
            os.kill(pid, signal.SIGKILL)


def _fork(conn: socket.socket, own: tuple[object, object], inherited: list[int]) -> int:
    """Fork the child of one request; its pid (0 when refused)."""
    request, fds = _receive(conn, fds=3)
    if (
        not isinstance(request, dict)
        or len(fds) != 3
        or (_interpreter_env(request["env"]), request["places"]) != own
    ):
        # A fork has the zygote's interpreter and namespaces (an `unshare -m` of the
        # caller's, a read-only mount...): the real script runs instead.
        for fd in fds:
            os.close(fd)
        _send(conn, {"refused": True})
        conn.close()
        return 0
    pid = os.fork()
    if pid == 0:
        for fd in [*inherited, conn.fileno()]:
            os.close(fd)
        _child(request, fds)
    for fd in fds:
        os.close(fd)
    _send(conn, {"pid": pid})
    return pid


def _reap(children: dict[int, socket.socket], select: selectors.BaseSelector) -> None:
    while children:
        pid, status, usage = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            return
        conn = children.pop(pid)
        with contextlib.suppress(KeyError, ValueError):
            select.unregister(conn)  # gone already if its shim was killed
        code = os.waitstatus_to_exitcode(status)
        answer = {"exit": code} if code >= 0 else {"signal": -code}
        with contextlib.suppress(OSError):  # a killed shim hears nothing
            cpu = usage.ru_utime + usage.ru_stime
            _send(conn, {**answer, "maxrss": usage.ru_maxrss, "cpu": cpu})
        conn.close()


def _child(request: dict[str, Any], fds: list[int]) -> None:
    """In the fork: become the requested run of the console script; never returns."""
    import atexit
    import time
    import traceback

    signal.set_wakeup_fd(-1)
    for number in (signal.SIGCHLD, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    for number, soft, hard in request["limits"]:
        with contextlib.suppress(ValueError, OSError):  # one only root may raise again
            resource.setrlimit(number, (soft, hard))
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    sys.stdin = _stream(0, "r", sys.stdin, unbuffered)
    sys.stdout = _stream(1, "w", sys.stdout, unbuffered)
    sys.stderr = _stream(2, "w", sys.stderr, unbuffered)
    sys.argv = list(request["argv"])
    code = 0
    try:
        from sitemap_reader.cli import main

        code = main()
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # as the interpreter does when the last flush fails
    os._exit(code)


def _stream(fd: int, mode: str, like: TextIO, unbuffered: bool) -> TextIO:
    """A standard stream on ``fd`` as the interpreter makes it at start."""
    raw = io.FileIO(fd, mode, closefd=False)
    buffered: io.RawIOBase | io.BufferedIOBase
    if mode == "r":
        buffered = io.BufferedReader(raw)
    else:
        buffered = raw if unbuffered else io.BufferedWriter(raw)
    return io.TextIOWrapper(
        buffered,
        encoding=like.encoding,
        errors=like.errors,
        line_buffering=not unbuffered and mode == "w" and (raw.isatty() or fd == 2),
        write_through=unbuffered and mode == "w",
    )


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    serve(sys.argv[1])
