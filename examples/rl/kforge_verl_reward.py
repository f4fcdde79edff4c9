"""verl reward functions that ask a kforge reward service for each sample's reward.

Two ways to plug it in (verl's config):

1. One sample per call (verl's default "naive" reward manager, which calls it for each sample in
   turn, so a step waits for its evaluations one after another):
       custom_reward_function:
         path: /path/to/kforge/examples/rl/kforge_verl_reward.py
         name: compute_score

2. The whole batch in one call (reward_model.reward_manager=batch): every sample of the step is
   sent in one request and evaluated at once, so the step waits about as long as its slowest
   evaluation, not the sum. The samples of one prompt (GRPO's rollout.n) go as one group to
   POST /v1/groups, so a prompt whose samples all failed is kept for replay (BDR):
       reward_model:
         reward_manager: batch
       custom_reward_function:
         path: /path/to/kforge/examples/rl/kforge_verl_reward.py
         name: compute_score_batch

Set KFORGE_URL (default http://127.0.0.1:8000) where `kforge serve` runs, and KFORGE_TOKEN to
its bearer token (the value of the variable `kforge serve --token-env` names) when it has one.

The dataset's ground_truth names the problem: a registered id such as "level1/relu" (the server
was started with --problems DIR), or the problem's source text (anything containing
`class Model`; only where the server was started with --allow-inline-problems, since problem
code then runs on the service's machine, confined). solution_str is the model's reply; the
service takes its first fenced code block that defines ModelNew.

Plain Python, standard library only.
"""
import concurrent.futures
import json
import os
import time
import urllib.error
import urllib.request

# A sample whose candidate could not be evaluated (kforge's own failure, or no answer in
# time) gets this reward, so one broken sample never stops training.
MISSING_REWARD = float(os.environ.get("KFORGE_MISSING_REWARD", "0.0"))
TIMEOUT_S = float(os.environ.get("KFORGE_TIMEOUT_S", "900"))
# One request holds at most this many samples and bytes (the service's defaults: 4096 items,
# --max-body-bytes 16 MiB); a larger batch goes as several requests at once.
MAX_SAMPLES_PER_REQUEST = 4096
MAX_BYTES_PER_REQUEST = 8 << 20


def _url():
    return os.environ.get("KFORGE_URL", "http://127.0.0.1:8000").rstrip("/")


def _post(path, body, timeout_s):
    headers = {"Content-Type": "application/json"}
    token = os.environ.get("KFORGE_TOKEN", "")
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(_url() + path, data=json.dumps(body).encode(), method="POST",
                                 headers=headers)
    with urllib.request.urlopen(req, timeout=timeout_s) as r:
        return json.loads(r.read())


def _post_retrying(path, body):
    """The answer, or None when the service stayed unreachable or full."""
    for attempt in range(6):
        try:
            return _post(path, body, TIMEOUT_S + 30)
        except urllib.error.HTTPError as e:
            if e.code != 503:  # 4xx: the request is wrong (e.g. unknown problem); say so
                raise RuntimeError("kforge: %s" % e.read().decode(errors="replace")) from None
            time.sleep(float(e.headers.get("Retry-After", "5")))  # the service is full
        except OSError:
            time.sleep(2 ** attempt)
    return None


def _problem(ground_truth):
    if isinstance(ground_truth, dict):
        return dict(ground_truth)
    if "class Model" in ground_truth:
        return {"problem_source": ground_truth}
    return {"problem": ground_truth}


def _item(ground_truth, solution_str):
    item = _problem(ground_truth)
    item["candidate"] = solution_str
    return item


def _score(result):
    """verl's per-sample answer: the reward under "score", the rest logged as extra info."""
    reward = result.get("reward")
    return {
        "score": MISSING_REWARD if reward is None else float(reward),
        "status": result.get("status", result.get("state", "unavailable")),
        "correct": 1.0 if result.get("status") == "ok" else 0.0,
        "speedup": float(result.get("speedup_vs_eager") or 0.0),
    }


UNAVAILABLE = {"score": MISSING_REWARD, "status": "unavailable", "correct": 0.0, "speedup": 0.0}


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """Returns {"score": reward, ...verdict fields} (verl logs the extra keys)."""
    body = {"items": [_item(ground_truth, solution_str)], "timeout_s": TIMEOUT_S}
    out = _post_retrying("/v1/reward", body)
    if out is None:
        return dict(UNAVAILABLE)
    return _score(out["results"][0])


def _jsonable(x):
    """extra_info as plain JSON (verl hands numpy scalars and arrays; str() what is left)."""
    return json.loads(json.dumps(x, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)))


def _groups(solution_strs, ground_truths, extra_infos):
    """Samples of one prompt as one group: same label and same extra_info (verl repeats a
    dataset row's extra_info for each of its rollout.n samples). Returns [(group, [indices])]."""
    order, by_key = [], {}
    for i, (sol, gt) in enumerate(zip(solution_strs, ground_truths)):
        extra = extra_infos[i] if extra_infos is not None else None
        extra = _jsonable(extra) if extra is not None else None
        key = json.dumps([gt if isinstance(gt, str) else _jsonable(gt), extra], sort_keys=True)
        if key not in by_key:
            group = _problem(gt)
            group["candidates"] = []
            if isinstance(extra, dict):
                group["metadata"] = extra  # BDR hands it back with a replay (e.g. the row index)
                if isinstance(extra.get("prompt"), str):
                    group["prompt"] = extra["prompt"]
            by_key[key] = (group, [])
            order.append(key)
        by_key[key][0]["candidates"].append(sol)
        by_key[key][1].append(i)
    return [by_key[k] for k in order]


def _requests(groups):
    """Groups packed into requests within the service's limits (a group is never split)."""
    reqs, cur, n, size = [], [], 0, 0
    for group, idx in groups:
        g_size = sum(len(c) for c in group["candidates"]) + len(group.get("problem_source", ""))
        if cur and (n + len(idx) > MAX_SAMPLES_PER_REQUEST or size + g_size > MAX_BYTES_PER_REQUEST):
            reqs.append(cur)
            cur, n, size = [], 0, 0
        cur.append((group, idx))
        n += len(idx)
        size += g_size
    if cur:
        reqs.append(cur)
    return reqs


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
    """verl's batch reward manager: one call per step, one answer per sample, in order.

    verl (verl/workers/reward_manager/batch.py, BatchRewardManager.verify) calls
        compute_score(data_sources=..., solution_strs=..., ground_truths=..., extra_infos=...,
                      **reward_kwargs)
    with one list entry per sample, and reads back a list of the same length whose entries are
    a float or a dict holding "score" (the other keys are logged as reward_extra_info, so every
    dict has the same keys). The whole batch goes to POST /v1/groups at once (several requests
    sent together when it is larger than one request may be).
    """
    n = len(solution_strs)
    if len(ground_truths) != n or (extra_infos is not None and len(extra_infos) != n):
        raise ValueError("kforge: solution_strs, ground_truths and extra_infos differ in length")
    scores = [None] * n
    reqs = _requests(_groups(solution_strs, ground_truths, extra_infos))

    def run(req):
        body = {"groups": [g for g, _ in req], "timeout_s": TIMEOUT_S}
        out = _post_retrying("/v1/groups", body)
        for k, (_, idx) in enumerate(req):
            results = out["groups"][k]["results"] if out is not None else [None] * len(idx)
            for i, r in zip(idx, results):
                scores[i] = _score(r) if r is not None else dict(UNAVAILABLE)

    if len(reqs) == 1:
        run(reqs[0])
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(reqs)) as pool:
            list(pool.map(run, reqs))
    return scores


if __name__ == "__main__":
    import sys
    # python3 kforge_verl_reward.py level1/relu examples/cpu/relu.py [more candidates ...]
    sols = []
    for path in sys.argv[2:]:
        with open(path) as f:
            sols.append(f.read())
    if len(sols) == 1:
        print(compute_score("kernelbench", sols[0], sys.argv[1]))
    else:
        print(compute_score_batch(["kernelbench"] * len(sols), sols, [sys.argv[1]] * len(sols)))
