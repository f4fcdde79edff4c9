"""verl custom reward function that asks a kforge reward service for each sample's reward.

In verl's config:
    custom_reward_function:
      path: /path/to/kforge/examples/rl/kforge_verl_reward.py
      name: compute_score
and set KFORGE_URL (default http://127.0.0.1:8000) where `kforge serve` runs, and KFORGE_TOKEN
to its bearer token (the value of the variable `kforge serve --token-env` names) when it has one.

The dataset's ground_truth names the problem: a registered id such as "level1/relu" (the server
was started with --problems DIR), or the problem's source text (anything containing
`class Model`; only where the server was started with --allow-inline-problems, since problem
code then runs on the service's machine, confined). solution_str is the model's reply; the service takes its first fenced code block
that defines ModelNew.

Plain Python, standard library only.
"""
import json
import os
import time
import urllib.error
import urllib.request

KFORGE_URL = os.environ.get("KFORGE_URL", "http://127.0.0.1:8000")
# A sample whose candidate could not be evaluated (kforge's own failure, or no answer in
# time) gets this reward, so one broken sample never stops training.
MISSING_REWARD = float(os.environ.get("KFORGE_MISSING_REWARD", "0.0"))
TIMEOUT_S = float(os.environ.get("KFORGE_TIMEOUT_S", "900"))
TOKEN = os.environ.get("KFORGE_TOKEN", "")


def _post(path, body, timeout_s):
    headers = {"Content-Type": "application/json"}
    if TOKEN:
        headers["Authorization"] = "Bearer " + TOKEN
    req = urllib.request.Request(KFORGE_URL.rstrip("/") + path, data=json.dumps(body).encode(),
                                 method="POST", headers=headers)
    with urllib.request.urlopen(req, timeout=timeout_s) as r:
        return json.loads(r.read())


def _item(ground_truth, solution_str):
    if isinstance(ground_truth, dict):
        item = dict(ground_truth)
    elif "class Model" in ground_truth:
        item = {"problem_source": ground_truth}
    else:
        item = {"problem": ground_truth}
    item["candidate"] = solution_str
    return item


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """Returns {"score": reward, ...verdict fields} (verl logs the extra keys)."""
    body = {"items": [_item(ground_truth, solution_str)], "timeout_s": TIMEOUT_S}
    for attempt in range(6):
        try:
            out = _post("/v1/reward", body, TIMEOUT_S + 30)
            break
        except urllib.error.HTTPError as e:
            if e.code != 503:  # 4xx: the request is wrong (e.g. unknown problem); say so
                raise RuntimeError("kforge: %s" % e.read().decode(errors="replace")) from None
            time.sleep(float(e.headers.get("Retry-After", "5")))  # the service is full
        except OSError:
            time.sleep(2 ** attempt)
    else:
        return {"score": MISSING_REWARD, "status": "unavailable", "speedup": 0.0}
    r = out["results"][0]
    reward = r["reward"]
    return {
        "score": MISSING_REWARD if reward is None else float(reward),
        "status": r.get("status", r["state"]),
        "correct": 1.0 if r.get("status") == "ok" else 0.0,
        "speedup": float(r.get("speedup_vs_eager") or 0.0),
    }


if __name__ == "__main__":
    import sys
    # python3 kforge_verl_reward.py level1/relu examples/cpu/relu.py
    with open(sys.argv[2]) as f:
        print(compute_score("kernelbench", f.read(), sys.argv[1]))
