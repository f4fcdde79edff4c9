"""JSON-lines messages over a Unix stream socket (the other end is kforge's C++ Channel)."""
import json
import math
import socket


def clean(value):
    """Make a value JSON-safe: non-finite floats become strings the C++ side can read."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


class Channel:
    def __init__(self, fd):
        self.sock = socket.socket(fileno=fd)
        self.buf = b""
        self.fds = []

    def send(self, msg):
        data = json.dumps(clean(msg), separators=(",", ":"), allow_nan=False) + "\n"
        self.sock.sendall(data.encode())

    def _fill(self):
        data, fds, _flags, _addr = socket.recv_fds(self.sock, 1 << 16, 4)
        self.fds.extend(fds)
        if not data:
            raise EOFError("supervisor closed the channel")
        self.buf += data

    def recv(self):
        while b"\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def take_fd(self):
        """The descriptor that came with the last message, if any."""
        return self.fds.pop(0) if self.fds else None

    def close(self):
        self.sock.close()
