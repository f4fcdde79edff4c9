"""A test case for the build worker's builds: a temporary folder with a stand-in of torch's
include folder, the worker's torch builder replaced by a test's fake, and the worker's end of a
channel (tests/runner/test_light_headers.py, test_split_build.py)."""
import os
import socket
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "runner"))

from kforge_runner import build_worker  # noqa: E402
from kforge_runner.channel import Channel  # noqa: E402


class WorkerCase(unittest.TestCase):
    """HEADERS: {path under the include folder: text}; make_builder(include): the fake builder."""

    HEADERS = {}

    def make_builder(self, include):
        raise NotImplementedError

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        inc = os.path.join(self.tmp.name, "include")
        for name, text in self.HEADERS.items():
            path = os.path.join(inc, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        self.saved_ce = build_worker._ce
        build_worker._ce = self.make_builder(inc)
        # The worker's side of its channel; the supervisor's end stays open (an EOF would mean
        # the supervisor died, and the worker would kill its process group).
        self.ours, theirs = socket.socketpair()
        self.chan = Channel(theirs.detach())
        self.builds = 0

    def tearDown(self):
        build_worker._ce = self.saved_ce
        self.ours.close()
        self.chan.sock.close()
        self.tmp.cleanup()

    def artifact_dir(self):
        """A fresh build folder for the next build."""
        self.builds += 1
        return os.path.join(self.tmp.name, "artifact%d" % self.builds)
