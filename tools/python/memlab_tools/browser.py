"""Debian's headless Chromium, driven over the DevTools protocol on a pipe: load a page, read it, screenshot it.

  python3 -m memlab_tools.browser PAGE.html --screenshot PAGE.png [--width 1400] [--height 0] [--pdf PAGE.pdf]

What the report's tests and the docs' screenshots use. Chromium is started with --remote-debugging-pipe: the
protocol's JSON messages go over file descriptors 3 and 4, NUL-separated, so no port, no websocket client and no
browser download (selenium or playwright) is needed; only the `chromium` package. Every request the page makes is
recorded (a self-contained page makes none beyond its own file), and so is every console message, exception and
log entry of level error.

`Browser` is a context manager; the browser process is stopped when it closes, and every call has a deadline.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


class BrowserError(RuntimeError):
    pass


def find() -> str | None:
    """The browser to run: $MEMLAB_CHROMIUM, else the first of chromium, chromium-browser, google-chrome on PATH."""
    env = os.environ.get("MEMLAB_CHROMIUM")
    if env:
        return env if shutil.which(env) else None
    return next((shutil.which(c) for c in CANDIDATES if shutil.which(c)), None)


@dataclass
class Loaded:
    """What a page did while it loaded."""

    url: str
    requests: list[str] = field(default_factory=list)   # every URL the page asked for, its own first
    errors: list[str] = field(default_factory=list)     # console errors, exceptions, log entries of level error
    console: list[str] = field(default_factory=list)    # every console message, any level

    @property
    def outside(self) -> list[str]:
        """Requests for anything but the page's own file (and inline data: URLs)."""
        return [u for u in self.requests if u != self.url and not u.startswith("data:")]


class Browser:
    def __init__(self, executable: str | None = None, width: int = 1400, height: int = 900, timeout: float = 30.0):
        self.executable = executable or find()
        if not self.executable:
            raise BrowserError("no chromium on PATH (apt-get install chromium; or set MEMLAB_CHROMIUM)")
        self.width, self.height, self.timeout = width, height, timeout
        self._buf = b""
        self._id = 0
        self._events: list[dict] = []

    # -- the process and the pipe ----------------------------------------------------------------------------------
    def __enter__(self) -> "Browser":
        self._profile = tempfile.mkdtemp(prefix="memlab-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def fds():  # the protocol's pipe on 3 (browser reads) and 4 (browser writes)
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [self.executable, "--headless", "--remote-debugging-pipe", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-pings", "--mute-audio",
                "--hide-scrollbars", "--force-color-profile=srgb", f"--window-size={self.width},{self.height}",
                f"--user-data-dir={self._profile}"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox
        self._proc = subprocess.Popen(args + ["about:blank"], preexec_fn=fds, close_fds=False,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable", session=True)
            self.call("Emulation.setDeviceMetricsOverride", {"width": self.width, "height": self.height,
                                                             "deviceScaleFactor": 1, "mobile": False}, session=True)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        try:
            if self._proc.poll() is None:
                try:
                    self._send("Browser.close")
                except OSError:
                    pass
                try:
                    self._proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
        finally:
            for fd in (self._to_browser, self._from_browser):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self._profile, ignore_errors=True)

    def _send(self, method: str, params: dict | None = None, session: bool = False) -> int:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        return self._id

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise BrowserError(f"chromium did not answer within {self.timeout:g} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError(f"chromium exited (status {self._proc.poll()})")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, params: dict | None = None, session: bool = False) -> dict:
        """A protocol command's result; events that arrive meanwhile are kept for `load`."""
        i = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._receive(deadline)
            if m.get("id") == i:
                if "error" in m:
                    raise BrowserError(f"{method}: {m['error'].get('message', m['error'])}")
                return m.get("result", {})
            self._events.append(m)

    # -- pages -----------------------------------------------------------------------------------------------------
    def load(self, path_or_url: str) -> Loaded:
        """Navigates to a file (or URL), waits for its load event and a quiet moment, and says what it did."""
        url = path_or_url if "://" in path_or_url else "file://" + os.path.abspath(path_or_url)
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self._events):
            self._events.append(self._receive(deadline))
        # Anything the page starts after its load event (a late image, a script's fetch) shows within this.
        quiet = time.monotonic() + 0.3
        while True:
            try:
                self._events.append(self._receive(quiet))
            except BrowserError:
                break
        out = Loaded(url)
        for e in self._events:
            method, p = e.get("method"), e.get("params", {})
            if method == "Network.requestWillBeSent":
                out.requests.append(p["request"]["url"])
            elif method == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                out.console.append(f"{p.get('type')}: {text}")
                if p.get("type") in ("error", "assert"):
                    out.errors.append(f"console.{p['type']}: {text}")
            elif method == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.errors.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
            elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                entry = p["entry"]
                out.errors.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}".strip())
        return out

    def evaluate(self, expression: str):
        """A JavaScript expression's value in the page (JSON-serialisable values only)."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in r:
            raise BrowserError(f"{expression}: {r['exceptionDetails'].get('text')}")
        return r["result"].get("value")

    def screenshot(self, out: str, full_page: bool = True, height: int = 0) -> tuple[int, int]:
        """A PNG of the page as a reader sees it: the whole page (full_page), or its top `height` pixels."""
        size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        w, h = max(self.width, size[0]), size[1]
        if height:
            h = min(h, height)
        elif not full_page:
            h = self.height
        shot = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                   "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}},
                         session=True)
        with open(out, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        return w, h

    def pdf(self, out: str | None = None) -> bytes:
        """The page printed (A4 landscape, as its print style asks), as PDF bytes; written to `out` when given."""
        r = self.call("Page.printToPDF", {"preferCSSPageSize": True, "printBackground": True}, session=True)
        data = base64.b64decode(r["data"])
        if out:
            with open(out, "wb") as f:
                f.write(data)
        return data


def pdf_pages(data: bytes) -> int:
    """How many pages a PDF (Chromium's) holds."""
    import re

    return len(re.findall(rb"/Type\s*/Page(?![s\w])", data))


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python3 -m memlab_tools.browser", description=__doc__.split("\n\n")[0])
    ap.add_argument("page")
    ap.add_argument("--screenshot", help="PNG to write")
    ap.add_argument("--pdf", help="the page printed, as PDF")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=0, help="only the top HEIGHT pixels (default: the whole page)")
    ap.add_argument("--until", metavar="SELECTOR", help="only down to the end of the first element SELECTOR matches "
                                                        "(a CSS selector: 'table.failing')")
    a = ap.parse_args(argv)
    if not os.path.isfile(a.page):
        print(f"{ap.prog}: {a.page}: no such file", file=sys.stderr)
        return 2
    try:
        with Browser(width=a.width) as b:
            loaded = b.load(a.page)
            for e in loaded.errors:
                print(f"console error: {e}", file=sys.stderr)
            for u in loaded.outside:
                print(f"request outside the file: {u}", file=sys.stderr)
            if a.screenshot:
                height = a.height
                if a.until:
                    bottom = b.evaluate(f"(e => e && e.getBoundingClientRect().bottom + window.scrollY)"
                                        f"(document.querySelector({a.until!r}))")
                    if bottom is None:
                        print(f"{ap.prog}: --until: nothing on the page matches {a.until}", file=sys.stderr)
                        return 2
                    height = int(bottom) + 16
                w, h = b.screenshot(a.screenshot, height=height)
                print(f"wrote {a.screenshot} ({w} x {h})", file=sys.stderr)
            if a.pdf:
                print(f"wrote {a.pdf} ({pdf_pages(b.pdf(a.pdf))} pages)", file=sys.stderr)
    except BrowserError as e:
        print(f"{ap.prog}: {e}", file=sys.stderr)
        return 3
    return 1 if loaded.errors or loaded.outside else 0


if __name__ == "__main__":
    sys.exit(main())
