"""Problems sent with a request are untrusted (issue 16, docs/SECURITY.md "The reward service").

1. By default the service refuses them: problem_source, and OpenRLHF/slime labels that hold a
   problem's source, get 400 with a message that names the fix; nothing runs.
2. With --allow-inline-problems, a problem whose top-level code writes a file outside its
   folder and opens a TCP connection to a listener on loopback is run in a confined judge of
   its own: the file is never written, the listener never sees a connection, and an honest
   candidate still gets its verdict (ok). A problem that fails when confined ends infra_error
   with its own error, and the service goes on serving registered problems. The same holds on
   a GPU (KFORGE_TEST_BACKEND=cuda): the confined judge borrows its shared buffers from the
   trusted judge, whose CUDA IPC handles open in the candidate host's pid namespace.

usage: test_untrusted.py KFORGE [CACHE]
"""
import os
import socket

from common import Cluster, PROBLEMS, RELU, fresh, http, read, run_test

ESCAPE = '''
import os
import socket

# What an attacker's problem does on import; it swallows its failures so that it still loads.
try:
    with open(%(marker)r, "w") as f:
        f.write("written by the problem")
except OSError:
    pass
try:
    s = socket.create_connection(("127.0.0.1", %(port)d), timeout=3)
    s.sendall(b"reached from the problem")
    s.close()
except OSError:
    pass
'''

LOUD = '''
# This one does not swallow: confined, its import fails.
with open(%(marker)r, "w") as f:
    f.write("written by the problem")
'''


def refuses_by_default(url):
    relu = read(RELU)
    problem = read(os.path.join(PROBLEMS, "level1", "relu.py"))
    cases = [
        ("/v1/evaluations", {"problem_source": problem, "candidate": relu}),
        ("/v1/evaluations", {"items": [{"problem": "level1/relu", "candidate": relu},
                                       {"problem_source": problem, "candidate": relu}]}),
        ("/v1/reward", {"problem_source": problem, "candidate": relu}),
        ("/get_reward", {"query": [relu], "labels": [problem]}),
        ("/get_reward", {"query": [relu], "labels": [{"problem_source": problem}]}),
        ("/slime/reward", {"prompt": "p", "response": relu, "label": problem}),
    ]
    for path, body in cases:
        code, got, _ = http("POST", url + path, body)
        assert code == 400, (path, code, got)
        assert "--allow-inline-problems" in got["error"] and "registered" in got["error"], got
    # Nothing of a refused batch runs: its registered item was not queued either.
    code, health, _ = http("GET", url + "/healthz")
    assert code == 200 and health["in_flight"] == 0, health
    print("default: %d requests with a problem's text refused with 400" % len(cases))
    # A reward batch refuses that sample alone (one bad sample fails one sample); the
    # registered one is evaluated.
    code, got, _ = http("POST", url + "/v1/reward", {"items": [
        {"problem": "level1/relu", "candidate": relu},
        {"problem_source": problem, "candidate": relu}]}, timeout=600)
    assert code == 200 and got["rewards"][1] is None, got
    refused = got["results"][1]
    assert refused["state"] == "refused" and "--allow-inline-problems" in refused["error"], refused
    assert got["results"][0]["status"] not in ("infra_error", None), got["results"][0]
    # An unknown problem's 404 advises only what this server takes: not problem_source.
    code, got, _ = http("POST", url + "/get_reward", {"query": [relu], "labels": ["level9/nope"]})
    assert code == 404 and "GET /v1/problems" in got["error"], got
    assert "problem_source" not in got["error"], got
    print("default: a batch's inline sample refused alone; the unknown problem's advice:",
          got["error"])


def contained(url, tmp):
    marker = os.path.join(tmp, "escaped-marker")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    problem = (ESCAPE % {"marker": marker, "port": port}) + read(
        os.path.join(PROBLEMS, "level1", "relu.py"))
    code, body, _ = http("POST", url + "/v1/reward",
                         {"problem_source": problem, "candidate": read(RELU)}, timeout=600)
    assert code == 200, body
    result = body["results"][0]
    # On a GPU too: the confined judge's buffers are the trusted judge's (it borrows them), so
    # the candidate host opens them across their pid namespaces.
    assert result["status"] == "ok", result
    assert result["verdict"]["problem"]["id"] == "inline", result
    assert not os.path.exists(marker), "the untrusted problem wrote " + marker
    try:
        conn, _ = listener.accept()
        conn.close()
        raise AssertionError("the untrusted problem opened a TCP connection to the test")
    except socket.timeout:
        pass
    finally:
        listener.close()
    print("allowed: the problem's file write and TCP connection were contained; verdict",
          result["status"], "reward", result["reward"])

    loud = (LOUD % {"marker": marker}) + read(os.path.join(PROBLEMS, "level1", "relu.py"))
    code, body, _ = http("POST", url + "/v1/reward",
                         {"problem_source": loud, "candidate": fresh(read(RELU))}, timeout=600)
    assert code == 200, body
    result = body["results"][0]
    assert result["status"] == "infra_error" and result["reward"] is None, result
    messages = " ".join(d["message"] for d in result["verdict"]["diagnostics"])
    assert "untrusted problem" in messages and "escaped-marker" in messages, messages
    assert not os.path.exists(marker), "the untrusted problem wrote " + marker
    print("allowed: a problem that fails confined ends infra_error:", messages[:160])

    # The service goes on: a registered problem (trusted judge) right after.
    code, body, _ = http("POST", url + "/v1/reward",
                         {"problem": "level1/relu", "candidate": fresh(read(RELU))}, timeout=600)
    assert code == 200 and body["results"][0]["status"] == "ok", body


def body(c):
    refuses_by_default(c.start_serve("serve-default", []))
    contained(c.start_serve("serve-inline", ["--allow-inline-problems"]), c.tmp)


def main():
    run_test("test_untrusted", body)


if __name__ == "__main__":
    main()
