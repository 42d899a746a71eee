"""Real servers for memlab check's integration tests: started on localhost from temporary folders,
bounded in time, and always stopped (their whole process group) when the test ends, passes or fails.

A missing server is a skip (exit 77) on a developer's machine and a failure under CI=1: CI installs
them with tools/setup.sh.
"""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77


def need(*programs):
    """Exits 77 (or 1 under CI) when a program is missing; returns their paths."""
    found = [shutil.which(p) or (p if os.path.isabs(p) and os.access(p, os.X_OK) else None) for p in programs]
    missing = [p for p, f in zip(programs, found) if f is None]
    if missing:
        print(f"not installed: {', '.join(missing)} (tools/setup.sh installs them)", file=sys.stderr)
        sys.exit(1 if os.environ.get("CI") else SKIP)
    return found


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, predicate, timeout, every=0.1):
    """Calls predicate until it returns something true, at most `timeout` seconds; raises naming `what`."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            got = predicate()
            if got:
                return got
        except Exception as e:  # noqa: BLE001 - a server not up yet answers with any error
            last = e
        time.sleep(every)
    raise TimeoutError(f"{what}: not within {timeout} s" + (f" (last error: {last})" if last else ""))


class Servers:
    """Processes started in their own process groups, each with its log in the temporary folder."""

    def __init__(self, folder):
        self.folder = folder
        self.procs = []

    def start(self, name, argv, env=None):
        log = open(os.path.join(self.folder, f"{name}.log"), "wb")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, env=env, cwd=self.folder)
        self.procs.append((name, p, log))
        return p

    def log(self, name):
        path = os.path.join(self.folder, f"{name}.log")
        return open(path, errors="replace").read() if os.path.exists(path) else ""

    def check_alive(self):
        for name, p, _ in self.procs:
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited with {p.returncode}:\n{self.log(name)[-2000:]}")

    def stop(self):
        for name, p, log in reversed(self.procs):
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=3)
            log.close()
        self.procs = []


@contextlib.contextmanager
def servers(prefix):
    folder = tempfile.mkdtemp(prefix=f"memlab_{prefix}_")
    s = Servers(folder)
    try:
        yield s
    finally:
        s.stop()
        shutil.rmtree(folder, ignore_errors=True)


def run(argv, timeout=10, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


class Failed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failed(message)


def main(test):
    """Runs test(); exit 0 when it passes, 1 with the failure on stderr."""
    t0 = time.monotonic()
    try:
        test()
    except Failed as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"passed in {time.monotonic() - t0:.1f} s")
