"""Headless Chromium, driven over the DevTools protocol: open a page, evaluate, screenshot.

Used to see the live view where no one can look (a server, CI): ``jointlab view
--screenshot`` and the browser test. Needs the Debian ``chromium`` package (``make test``
installs it where missing). The protocol runs over the ``websockets`` client viser brings.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time as wallclock
import urllib.request
from typing import Any

import numpy as np

from jointlab.errors import JointLabError
from jointlab.scheduling import normal_scheduling

__all__ = ["BrowserError", "HeadlessBrowser", "find_chromium"]

_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserError(JointLabError):
    """No browser, or the browser did not answer in time."""


def find_chromium() -> str | None:
    """Path of a Chromium or Chrome executable (``$CHROMIUM`` first), or None."""
    given = os.environ.get("CHROMIUM")
    if given:
        return shutil.which(given) or (given if os.access(given, os.X_OK) else None)
    for name in _NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HeadlessBrowser:
    """One headless Chromium with one page; a context manager (``close()`` kills it).

    Args:
        size: Window size in CSS pixels ``(width, height)``.
        timeout: Seconds to wait for the browser to start and for each protocol call.
    """

    def __init__(self, size: tuple[int, int] = (1280, 800), timeout: float = 30.0) -> None:
        from websockets.sync.client import connect

        executable = find_chromium()
        if executable is None:
            raise BrowserError(
                "no Chromium found (looked for $CHROMIUM, " + ", ".join(_NAMES) + "): "
                "install the Debian package with `apt-get install -y chromium` "
                "(make test does it where missing)"
            )
        self.timeout = float(timeout)
        self._profile = tempfile.mkdtemp(prefix="jointlab-chromium-")
        port = _free_port()
        self._process = subprocess.Popen(
            [
                executable,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
                f"--user-data-dir={self._profile}",
                f"--remote-debugging-port={port}",
                f"--window-size={size[0]},{size[1]}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=normal_scheduling,  # never a real-time policy inherited from us
        )
        self._next_id = 0
        try:
            target = self._page_target(port)
            self._socket = connect(target, max_size=None, open_timeout=self.timeout)
            self.call("Page.enable")
            self.call("Runtime.enable")
        except BaseException:
            self._kill()
            raise

    def _page_target(self, port: int) -> str:
        deadline = wallclock.monotonic() + self.timeout
        while True:
            if self._process.poll() is not None:
                raise BrowserError(f"Chromium exited at start (code {self._process.returncode})")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                    pages = [t for t in json.load(r) if t.get("type") == "page"]
                if pages:
                    return str(pages[0]["webSocketDebuggerUrl"])
            except OSError:
                pass
            if wallclock.monotonic() > deadline:
                raise BrowserError(f"Chromium did not open its DevTools port in {self.timeout} s")
            wallclock.sleep(0.1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """One DevTools command; returns its ``result`` (events in between are dropped)."""
        self._next_id += 1
        ident = self._next_id
        self._socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = wallclock.monotonic() + self.timeout
        while True:
            remaining = deadline - wallclock.monotonic()
            if remaining <= 0:
                raise BrowserError(f"Chromium did not answer {method} in {self.timeout} s")
            try:
                message = json.loads(self._socket.recv(timeout=remaining))
            except TimeoutError as exc:
                raise BrowserError(f"Chromium did not answer {method} in {self.timeout} s") from exc
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error'].get('message')}")
                return dict(message.get("result", {}))

    def open(self, url: str) -> None:
        """Navigate to ``url`` (returns when navigation started; use :meth:`wait_for`)."""
        self.call("Page.navigate", url=url)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (promises awaited)."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"JavaScript error: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 30.0, what: str = "") -> Any:
        """Poll ``expression`` until it is truthy; its value, or a :class:`BrowserError`."""
        deadline = wallclock.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if wallclock.monotonic() > deadline:
                raise BrowserError(f"waited {timeout} s for {what or expression}")
            wallclock.sleep(0.1)

    def screenshot(self) -> np.ndarray:
        """The page as an ``(H, W, 3)`` uint8 RGB image."""
        from PIL import Image

        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))

    def _kill(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=5)
        shutil.rmtree(self._profile, ignore_errors=True)

    def close(self) -> None:
        """Close the page's socket and the browser; safe to call twice."""
        socket_ = getattr(self, "_socket", None)
        if socket_ is not None:
            socket_.close()
            self._socket = None
        self._kill()

    def __enter__(self) -> HeadlessBrowser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
