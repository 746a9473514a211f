"""A minimal Chrome DevTools Protocol client over --remote-debugging-pipe.

Chromium reads commands from fd 3 and writes replies and events to fd 4,
each a JSON message terminated by a NUL byte, so no websocket library is
needed. Every wait has a deadline and close() kills the browser's whole
process group: a test that uses this can fail, never hang.
"""

import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "headless_shell")


def find_chromium(explicit=None):
    """The browser to run: explicit, $MB_CHROMIUM, or the first on PATH."""
    for name in (explicit, os.environ.get("MB_CHROMIUM")) + CANDIDATES:
        if name:
            path = shutil.which(name)
            if path:
                return path
    return None


class CdpError(Exception):
    def __init__(self, message, page_error=False):
        super().__init__(message)
        # True: the page answered (a script threw, a command was refused);
        # False: the browser timed out or went away.
        self.page_error = page_error


class Browser:
    def __init__(self, chromium, timeout=30.0, width=1280, height=900):
        self.timeout = timeout
        self.events = []  # every event received, in order: (method, params)
        self._buf = b""
        self._next_id = 0
        self._profile = tempfile.mkdtemp(prefix="mb-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def child_fds():
            # Move both ends above any fd that may already be 3 or 4, then
            # onto exactly 3 (commands in) and 4 (messages out).
            hi_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            hi_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        # Chromium is not built with our sanitizers: don't hand it their
        # settings.
        env = {k: v for k, v in os.environ.items()
               if not k.endswith("SAN_OPTIONS") and k != "LD_PRELOAD"}
        args = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions",
                "--hide-scrollbars", "--mute-audio",
                "--force-device-scale-factor=1",
                "--window-size=%d,%d" % (width, height),
                "--remote-debugging-pipe",
                "--user-data-dir=" + self._profile, "about:blank"]
        # Its own words, for the error when it dies or hangs.
        self._log = open(os.path.join(self._profile, "stderr.log"), "w+b")
        self.proc = subprocess.Popen(
            args, pass_fds=(3, 4), preexec_fn=child_fds, env=env,
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
            start_new_session=True)
        os.close(to_child_r)
        os.close(from_child_w)
        self.session = None

    # -- transport ---------------------------------------------------------

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("timed out waiting for the browser"
                               + self._log_tail())
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise CdpError("the browser closed its pipe (exit %s)%s"
                                   % (self.proc.poll(), self._log_tail()))
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def _log_tail(self):
        try:
            self._log.seek(0)
            text = self._log.read().decode(errors="replace")[-1500:].strip()
        except (OSError, ValueError):
            return ""
        return "; its output ends:\n" + text if text else ""

    def send(self, method, params=None, browser=False, timeout=None):
        """Sends a command (to the page's session unless browser) and
        returns its result, collecting events that arrive meanwhile."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session and not browser:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CdpError("%s: %s" % (method, reply["error"]),
                                   page_error=True)
                return reply.get("result", {})
            if "method" in reply:
                self.events.append((reply["method"], reply.get("params", {})))

    def wait_event(self, method, since=0, timeout=None):
        """The first event named method at or after index since."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for name, params in self.events[since:]:
                if name == method:
                    return params
            since = len(self.events)
            reply = self._read_message(deadline)
            if "method" in reply:
                self.events.append((reply["method"], reply.get("params", {})))

    def pump(self, seconds):
        """Collects the events that arrive within seconds."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                reply = self._read_message(deadline)
                if "method" in reply:
                    self.events.append((reply["method"],
                                        reply.get("params", {})))
        except CdpError:
            pass

    # -- the page ------------------------------------------------------------

    def attach_page(self):
        """Attaches to the page chromium opened (flat session mode)."""
        deadline = time.monotonic() + self.timeout
        while True:
            targets = self.send("Target.getTargets", browser=True)
            pages = [t for t in targets["targetInfos"] if t["type"] == "page"]
            if pages:
                break
            if time.monotonic() > deadline:
                raise CdpError("chromium opened no page")
            time.sleep(0.05)
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": pages[0]["targetId"],
                                  "flatten": True},
                                 browser=True)["sessionId"]

    def evaluate(self, expression):
        """The value of a JS expression (JSON-able), or CdpError if it
        threw."""
        res = self.send("Runtime.evaluate",
                        {"expression": expression, "returnByValue": True,
                         "awaitPromise": True})
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            text = d.get("exception", {}).get("description") or d.get("text")
            raise CdpError("evaluate threw: %s" % text, page_error=True)
        return res["result"].get("value")

    def close(self):
        """Kills the browser and every process it started."""
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        # The whole group: the renderer and GPU processes too (the
        # browser is its leader, start_new_session).
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
