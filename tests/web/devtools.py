"""A small Chrome DevTools Protocol client for tests: starts Debian's headless Chromium and
drives one page (navigate, evaluate JavaScript, wait, screenshot) over the protocol's WebSocket.

Standard library only: the WebSocket client (RFC 6455: the handshake, masked text frames out,
unmasked frames in, fragments, ping/pong, close) is the few lines below, so the browser test
needs no npm and no PyPI package, only the `chromium` package.
"""
import base64
import hashlib
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.parse

CHROMIUM = os.environ.get("KFORGE_CHROMIUM", "/usr/bin/chromium")
# Headless, and quiet on a closed network: without the background-networking flags Chromium
# keeps trying to reach Google's hosts.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-port=0", "about:blank"]
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class WebSocket:
    """One client connection; text messages only (what DevTools speaks)."""

    def __init__(self, url, timeout_s=60):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout_s)
        key = base64.b64encode(os.urandom(16))
        self.sock.sendall(b"GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                          b"Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                          b"Sec-WebSocket-Version: 13\r\n\r\n"
                          % (u.path.encode(), u.hostname.encode(), u.port, key))
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.buf += self._recv_some()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        if b" 101 " not in lines[0]:
            raise ConnectionError("WebSocket handshake refused: %r" % lines[0])
        want = base64.b64encode(hashlib.sha1(key + _GUID).digest())
        if not any(l.lower().startswith(b"sec-websocket-accept:") and l.split(b":", 1)[1].strip() == want
                   for l in lines[1:]):
            raise ConnectionError("WebSocket handshake: wrong Sec-WebSocket-Accept")

    def _recv_some(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the browser closed the connection")
        return chunk

    def _read(self, n):
        while len(self.buf) < n:
            self.buf += self._recv_some()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _frame(self, opcode, payload):
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        # Client frames are masked (RFC 6455 5.3): XOR with the key repeated.
        key = int.from_bytes((mask * (n // 4 + 1))[:n], "big")
        body = (int.from_bytes(payload, "big") ^ key).to_bytes(n, "big") if n else b""
        self.sock.sendall(head + mask + body)

    def send(self, text):
        self._frame(0x1, text.encode())

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            data = self._read(n)
            if mask:
                data = bytes(c ^ mask[i % 4] for i, c in enumerate(data))
            if opcode == 0x8:
                raise ConnectionError("the browser closed the WebSocket")
            if opcode == 0x9:
                self._frame(0xA, data)
                continue
            if opcode == 0xA:
                continue
            message += data
            if b0 & 0x80:
                return message.decode("utf-8", "replace")

    def close(self):
        try:
            self._frame(0x8, b"")
        except OSError:
            pass
        self.sock.close()


class Browser:
    """Headless Chromium with one page attached; stop() ends it and removes its profile."""

    def __init__(self, width=1280, height=900, timeout_s=60):
        self.profile = tempfile.mkdtemp(prefix="kf-chromium-")
        self.proc = subprocess.Popen([CHROMIUM, "--user-data-dir=" + self.profile,
                                      "--window-size=%d,%d" % (width, height)] + FLAGS,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + timeout_s
        while not os.path.exists(port_file) or len(open(port_file).read().split()) < 2:
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError("Chromium did not start (%s)" % CHROMIUM)
            time.sleep(0.1)
        port, path = open(port_file).read().split()[:2]
        self.ws = WebSocket("ws://127.0.0.1:%s%s" % (port, path), timeout_s)
        self.next_id = 0
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)
        self.size = (width, height)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                  session=True)

    def call(self, method, params=None, session=False):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:  # events in between are not needed here
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (promises awaited)."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, session=True)
        if "exceptionDetails" in r:
            raise RuntimeError("JavaScript failed: %s" % r["exceptionDetails"].get("text"))
        return r.get("result", {}).get("value")

    def wait_for(self, expression, timeout_s=30, what=None):
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            try:
                v = self.evaluate(expression)
                if v:
                    return v
            except RuntimeError:
                pass  # the page is between documents (a reload)
            time.sleep(0.2)
        raise AssertionError("timed out after %d s waiting for %s" % (timeout_s, what or expression))

    def goto(self, url, timeout_s=30):
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'",
                      timeout_s, "the page at " + url)

    def screenshot(self, path, full_page=True):
        """A PNG of the page (all of it, up to 3000 px high, when full_page)."""
        w, h = self.size
        if full_page:
            height = int(self.evaluate("document.documentElement.scrollHeight") or h)
            self.call("Emulation.setDeviceMetricsOverride",
                      {"width": w, "height": min(max(height, h), 3000), "deviceScaleFactor": 1,
                       "mobile": False}, session=True)
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": False}, session=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def stop(self):
        try:
            if getattr(self, "ws", None):
                try:
                    self.call("Browser.close")
                except (OSError, RuntimeError, ValueError):
                    pass
                self.ws.close()
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)
