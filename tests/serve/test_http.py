"""The reward service in its embedded mode (kforge serve alone): the HTTP API's answers,
4xx for bad requests (nothing lost meanwhile), 503 with Retry-After when full, the OpenRLHF and
slime adapters, /metrics.

usage: test_http.py KFORGE [CACHE]
"""
import os
import signal
import time

from common import Cluster, PROBLEMS, descendants, RELU, SLOW_RELU, fresh, http, read, run_test


def check_errors(url, good_job):
    relu = read(RELU)
    cases = [
        # (method, path, body or raw bytes, expected code, words the message must hold)
        ("POST", "/v1/evaluations", b"{not json", 400, "not valid JSON"),
        ("POST", "/v1/evaluations", {"problem": "level1/relu"}, 400, "'candidate' is required"),
        ("POST", "/v1/evaluations", {"problem": 5, "candidate": "x"}, 400, "'problem' must be a string"),
        ("POST", "/v1/evaluations", {"candidate": "x"}, 400, "exactly one of 'problem'"),
        ("POST", "/v1/evaluations", {"items": [{"problem": "level1/relu", "candidate": relu}, {"problem": "level1/relu"}]},
         400, "items[1].candidate"),
        ("POST", "/v1/evaluations", {"problem": "level9/nope", "candidate": relu}, 404, "unknown problem 'level9/nope'"),
        ("POST", "/v1/reward", {"problem_source": "x = 1", "candidate": relu}, 400, "not a KernelBench problem"),
        ("POST", "/get_reward", {"query": ["a", "b"], "labels": ["level1/relu"]}, 400, "differ in length"),
        ("POST", "/get_reward", {"query": ["a"], "labels": ["level7/x"]}, 404, "labels[0]"),
        ("POST", "/slime/reward", {"prompt": "p", "response": "r"}, 400, "'label' is required"),
        ("POST", "/slime/reward", {"prompt": "p", "response": "r", "label": "zz/none"}, 404, "unknown problem"),
        ("GET", "/v1/evaluations/" + "0" * 64, None, 404, "no evaluation"),
        ("GET", "/v1/evaluations/" + good_job + "?wait=abc", None, 400, "'wait'"),
        ("GET", "/v1/evaluations/" + good_job + "?wait=nan", None, 400, "'wait'"),
        ("GET", "/v1/evaluations/" + good_job + "?wait=inf", None, 400, "'wait'"),
        ("POST", "/v1/reward", {"problem": "level1/relu", "candidate": relu, "timeout_s": "abc"}, 400, "field 'timeout_s'"),
        ("POST", "/v1/reward?timeout_s=abc", {"problem": "level1/relu", "candidate": relu}, 400, "'timeout_s'"),
        ("POST", "/slime/reward?timeout_s=nan", {"response": relu, "label": "level1/relu"}, 400, "'timeout_s'"),
        ("POST", "/get_reward", {"query": ["x"], "labels": ["level1/relu"], "timeout_s": -1}, 400, "field 'timeout_s'"),
        ("POST", "/v1/reward", b"", 400, "the body is empty"),
        ("GET", "/v2/whatever", None, 404, "no such route"),
        ("POST", "/v1/evaluations", b"x" * (2 << 20), 413, "too large"),
    ]
    for method, path, body, want, words in cases:
        raw = body if isinstance(body, bytes) else None
        code, got, _ = http(method, url + path, body=None if raw is not None else body, raw=raw)
        if want == 413 and code is None:
            # Refused while the client still sent it (the answer lost to the closed
            # connection): refused all the same, and the service must go on serving.
            code = 413 if http("GET", url + "/healthz")[0] == 200 else code
        assert code == want, (path, body if raw is None else raw[:40], code, got)
        msg = got.get("error", "") if isinstance(got, dict) else str(got)
        # httplib itself may refuse an oversized body before our handler reads it.
        assert words in msg or (want == 413 and code == 413), (path, words, msg)
    print("errors: %d malformed, oversized and unknown-problem requests answered 4xx" % len(cases))


def check_one_bad_sample(url, relu, relu_reward):
    """One bad sample fails one sample (issue 31): a 5 MB answer in an OpenRLHF batch is that
    sample's format_error, a sample with an unknown problem or a query that is no string gets no
    reward, and the good sample still gets its verdict; the same in /v1/reward's items."""
    prompt = "Write a faster ReLU.\n"
    good = prompt + "```python\n" + relu + "\n```"
    code, body, _ = http("POST", url + "/get_reward", {
        "query": [good, prompt + "x" * (5 << 20), good, 42],
        "prompts": [prompt] * 4,
        "labels": ["level1/relu", "level1/relu", "level9/nope", "level1/relu"]}, timeout=600)
    assert code == 200, body
    assert body["rewards"] == body["scores"] and len(body["rewards"]) == 4, body
    assert abs(body["rewards"][0] - relu_reward) < 0.5 and body["rewards"][1] == -1, body["rewards"]
    assert body["rewards"][2:] == [0.0, 0.0], body["rewards"]  # --missing-reward's default
    logs = body["extra_logs"]
    assert logs["refused"] == [0, 0, 1, 1] and logs["answer_too_long"] == [0, 1, 0, 0], logs
    assert logs["no_reward"] == [0, 0, 1, 1] and logs["correct"][0] == 1, logs
    errors = body["errors"]
    assert errors[0] is None and "query[1]" in errors[1] and "5242880 bytes" in errors[1], errors
    assert "unknown problem 'level9/nope' in 'labels[2]'" in errors[2], errors
    assert "'query[3]' must be a string" in errors[3], errors
    code, body, _ = http("POST", url + "/v1/reward", {"items": [
        {"problem": "level1/relu", "candidate": relu},
        {"problem": "nope", "candidate": relu},
        {"problem": "level1/relu"}]}, timeout=600)
    assert code == 200, body
    assert abs(body["rewards"][0] - relu_reward) < 0.5 and body["rewards"][1:] == [None, None], body
    results = body["results"]
    assert results[0]["status"] == "ok" and results[0]["id"], results[0]
    for r, words in ((results[1], "unknown problem 'nope' in 'items[1]'"),
                     (results[2], "'items[2].candidate' is required")):
        assert r["state"] == "refused" and r["id"] is None and r["reward"] is None, r
        assert words in r["error"], r
    print("one bad sample: rewards", [round(x, 3) for x in body["rewards"][:1]], "and errors",
          [e[:50] if e else e for e in errors])


def check_answer_only(url, relu, relu_reward):
    """Only the response is evaluated: a repair prompt that carries a correct program, with
    OpenRLHF's special tokens (a leading <|endoftext|>, the query not starting with the prompt),
    never lends that program's reward to a response without code."""
    program = "```python\n" + relu + "\n```"
    qwen = ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
            "Write a faster ReLU for level1/relu.<|im_end|>\n<|im_start|>assistant\n" + program +
            "<|im_end|>\n<|im_start|>user\nIt is correct; make it faster.<|im_end|>\n"
            "<|im_start|>assistant\n")
    llama = ("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWrite a faster ReLU."
             "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n" + program +
             "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nMake it faster.<|eot_id|>"
             "<|start_header_id|>assistant<|end_header_id|>\n\n")
    plain = "Earlier you wrote:\n" + program + "\nMake it faster.\n"
    samples = [  # (query, prompt sent, expected split)
        ("<|endoftext|>" + qwen + "I give up, sorry.", qwen, "after_prompt"),  # the case
        ("<|endoftext|><|endoftext|>" + qwen + program + "<|im_end|><|endoftext|>", qwen, "after_prompt"),
        ("<|endoftext|>" + qwen + "I give up, sorry.<|im_end|>", "", "after_marker"),
        (llama + "I give up, sorry.<|eot_id|>", "", "after_marker"),
        (llama + program + "<|eot_id|>", "", "after_marker"),
        (plain + "I give up, sorry.", "", "none"),  # cannot be told: nothing is evaluated
    ]
    # Three at a time: the service under test takes only 3 jobs in flight.
    body = {"rewards": [], "spans": [], "extra_logs": {}}
    for part in (samples[:3], samples[3:]):
        code, got, _ = http("POST", url + "/get_reward", {
            "query": [q for q, _, _ in part], "prompts": [p for _, p, _ in part],
            "labels": ["level1/relu"] * len(part)}, timeout=600)
        assert code == 200, got
        body["rewards"] += got["rewards"]
        body["spans"] += got["spans"]
        for k, v in got["extra_logs"].items():
            body["extra_logs"].setdefault(k, []).extend(v)
    rewards = body["rewards"]
    assert [s["method"] for s in body["spans"]] == [m for _, _, m in samples], body["spans"]
    for i in (0, 2, 3, 5):
        assert rewards[i] == -1, (i, rewards, body["spans"][i])
    for i in (1, 4):
        assert rewards[i] > 0 and abs(rewards[i] - relu_reward) < 0.5, (i, rewards)
    logs = body["extra_logs"]
    assert logs["split_failed"] == [0, 0, 0, 0, 0, 1], logs
    assert logs["split_after_prompt"] == [1, 1, 0, 0, 0, 0], logs
    assert logs["answer_offset_bytes"][0] == len(("<|endoftext|>" + qwen).encode()), logs
    assert "why" in body["spans"][5] and "no assistant-turn marker" in body["spans"][5]["why"]
    # slime: a response that echoes its repair prompt gets nothing from the echo.
    code, r, _ = http("POST", url + "/slime/reward?full=1",
                      {"prompt": plain, "response": plain + "I give up.", "label": "level1/relu"})
    assert code == 200 and r["reward"] == -1 and r["span"]["method"] == "after_prompt", r
    print("answer only: rewards", rewards, "for splits", [m for _, _, m in samples])


def buffer_folders(pid):
    """The folders of the shared buffers process pid has mapped (/dev/shm/kforge-judge-*)."""
    with open("/proc/%d/maps" % pid) as f:
        return {os.path.dirname(line.split()[-1]) for line in f
                if "/kforge-judge-" in line and line.rstrip().endswith(tuple("0123456789"))}


def check_dead_judge(c, url, relu):
    """A judge killed outright (out of memory, SIGKILL) cannot remove its shared buffers; the
    lane that replaces it does, and the service keeps serving."""
    judges = [p for p, cmd in descendants(c.procs["serve"].pid).items()
              if "-m kforge_runner.judge " in cmd + " "]
    assert len(judges) == 1, judges
    folders = buffer_folders(judges[0])
    assert folders and all(os.path.isdir(d) for d in folders), folders
    os.kill(judges[0], signal.SIGKILL)
    code, body, _ = http("POST", url + "/v1/reward", {"problem": "level1/relu", "candidate": fresh(relu)},
                         timeout=600)
    assert code == 200, body
    r = body["results"][0]
    # ok; or a timing the loaded machine spoiled (`busy`): either way not the dead judge's doing.
    assert r["status"] == "ok" or (r["status"] == "infra_error" and any(
        d.get("code") == "busy" for d in r["verdict"].get("diagnostics", []))), r
    left = [d for d in folders if os.path.exists(d)]
    assert not left, "a killed judge's buffers were left in %s" % left
    print("a killed judge: the next job ok, its buffers removed:", sorted(folders))


def body(c):
    # Inline problems (the batch below) are refused unless allowed (test_untrusted.py).
    url = c.start_serve("serve", ["--max-in-flight", "3", "--max-body-bytes", str(1 << 20),
                                  "--allow-inline-problems"])
    code, body, _ = http("GET", url + "/v1/problems")
    assert code == 200 and any(p["id"] == "level1/relu" for p in body["problems"]), body

    # A real job in flight while bad requests come: it still completes.
    slow = fresh(read(SLOW_RELU))
    code, body, _ = http("POST", url + "/v1/evaluations", {"problem": "level1/relu", "candidate": slow})
    assert code == 202 and body["evaluations"][0]["state"] in ("queued", "running", "done"), body
    slow_id = body["id"]
    # Idempotent: the same problem and candidate are the same job.
    code, again, _ = http("POST", url + "/v1/evaluations", {"problem": "level1/relu", "candidate": slow})
    assert again["id"] == slow_id, again
    # Full (3 in flight: the slow job runs, two wait behind it): a fourth distinct job is
    # refused with 503 and Retry-After.
    fill = []
    for _ in range(2):
        code2, body2, _ = http("POST", url + "/v1/evaluations", {"problem": "level1/relu", "candidate": fresh(read(RELU))})
        assert code2 == 202, (code2, body2)
        fill.append(body2["id"])
    code3, body3, hdrs = http("POST", url + "/v1/evaluations", {"problem": "level1/relu", "candidate": fresh(read(RELU))})
    assert code3 == 503 and "Retry-After" in hdrs, (code3, body3, hdrs)
    assert "full" in body3["error"], body3
    print("overload: 503 with Retry-After:", hdrs["Retry-After"])

    check_errors(url, slow_id)
    code, body, _ = http("GET", url + "/v1/evaluations/%s?wait=300" % slow_id, timeout=320)
    assert code == 200 and body["state"] == "done" and body["status"] != "infra_error", body
    print("the job in flight during the bad requests:", body["status"])
    for job in fill:  # then the queue has room again
        code, body, _ = http("GET", url + "/v1/evaluations/%s?wait=300" % job, timeout=320)
        assert code == 200 and body["state"] == "done", body

    # A batch reward: an inline problem and a registered one, and a format error.
    relu = read(RELU)
    # Inline problems are content-addressed: the same text as a registered problem is that
    # problem; a changed comment makes it a new one.
    problem_src = fresh(read(os.path.join(PROBLEMS, "level1", "relu.py")))
    code, body, _ = http("POST", url + "/v1/reward", {"items": [
        {"problem": "level1/relu", "candidate": relu},
        {"problem_source": problem_src, "candidate": relu},
        # fresh: a rerun on the kept cache must evaluate it again, or /metrics (below)
        # would not count a format_error verdict taken from the store.
        {"problem": "level1/relu", "candidate": fresh("no code at all")}]}, timeout=600)
    assert code == 200, body
    st = [r["status"] for r in body["results"]]
    assert st[2] == "format_error" and body["rewards"][2] == -1, body["results"][2]
    assert st[0] != "infra_error" and st[1] != "infra_error", st
    assert body["results"][1]["verdict"]["problem"]["id"] == "inline", body["results"][1]
    rewards = body["rewards"]
    print("reward batch:", st, rewards)
    check_dead_judge(c, url, relu)

    # OpenRLHF: the query is prompt + response; the label names the problem.
    prompt = "Write a faster ReLU.\n"
    code, body, _ = http("POST", url + "/get_reward", {
        "query": [prompt + "```python\n" + relu + "\n```", prompt + "nothing"],
        "prompts": [prompt, prompt], "labels": ["level1/relu", "level1/relu"]}, timeout=600)
    assert code == 200 and len(body["rewards"]) == 2 and body["rewards"][1] == -1, body
    assert body["rewards"][0] == body["scores"][0] and "correct" in body["extra_logs"], body
    check_answer_only(url, relu, rewards[0])
    # A service that takes the 5 MB body (the first refuses bodies over 1 MiB, to test 413).
    check_one_bad_sample(c.start_serve("serve-8mib", ["--max-body-bytes", str(8 << 20)]), relu,
                         rewards[0])
    # slime: one sample; a bare number, or an object with ?full=1.
    code, r, _ = http("POST", url + "/slime/reward", {"prompt": prompt, "response": relu, "label": "level1/relu"})
    assert code == 200 and r == rewards[0], r
    code, r, _ = http("POST", url + "/slime/reward?full=1", {"prompt": prompt, "response": relu, "label": "level1/relu"})
    assert code == 200 and r["reward"] == rewards[0] and r["status"] == st[0], r

    code, text, _ = http("GET", url + "/metrics")
    for needle in ["kforge_queue_depth{queue=\"build\"}", "kforge_verdicts_total{status=\"format_error\"}",
                   "kforge_http_requests_total{route=\"evaluations\",code=\"400\"}",
                   "kforge_overload_total 1", "kforge_stage_seconds_count{stage=\"build\"}"]:
        assert needle in text, (needle, text)
    code, body, _ = http("GET", url + "/healthz")
    assert code == 200 and body["ok"] and body["engine"] == "embedded", body


def main():
    run_test("test_http", body)


if __name__ == "__main__":
    main()
