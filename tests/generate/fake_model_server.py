"""A scripted OpenAI-compatible chat server on loopback, for the generate and MCP tests.

Modes: "script" answers each request with the next reply of a list (the last one repeats),
"garbage" answers 200 with text that is not JSON, "slow" sleeps before answering,
"trickle" sends a byte every 0.2 s and never finishes,
"no_choices" answers JSON without choices. Every request body is recorded.
"""
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import time


class FakeModelServer:
    def __init__(self, replies=None, mode="script", delay_s=0.0):
        self.replies = list(replies or [])
        self.mode = mode
        self.delay_s = delay_s
        self.requests = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(n) or b"{}")
                with server.lock:
                    server.requests.append({"path": self.path, "body": body,
                                            "auth": self.headers.get("Authorization")})
                    index = len(server.requests) - 1
                if server.mode == "slow":
                    server.stopping.wait(server.delay_s)
                if server.mode == "trickle":  # a byte at a time, never finishing in time
                    try:
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", "100000")
                        self.end_headers()
                        while not server.stopping.wait(0.2):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                    except OSError:
                        pass
                    return None
                if server.mode == "garbage":
                    return self._send(200, b"<html>this is not an API</html>", "text/html")
                if server.mode == "no_choices":
                    return self._send(200, json.dumps({"object": "chat.completion"}).encode())
                content = server.replies[min(index, len(server.replies) - 1)] if server.replies else ""
                reply = {"id": "fake-%d" % index, "object": "chat.completion", "model": body.get("model"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": content}}],
                         "usage": {"prompt_tokens": 10, "completion_tokens": 20}}
                return self._send(200, json.dumps(reply).encode())

            def _send(self, code, data, ctype="application/json"):
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (the slow mode's point)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d/v1" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def prompts(self):
        """The user message of every request, in order."""
        with self.lock:
            return [r["body"]["messages"][-1]["content"] for r in self.requests]


def closed_port_url():
    """A loopback URL where nothing listens (connection refused)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return "http://127.0.0.1:%d/v1" % port
