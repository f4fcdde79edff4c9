"""OpenRLHF reward function (`--remote_rm_url /path/to/openrlhf_reward_func.py`) that asks a
kforge reward service, sending its bearer token: OpenRLHF's built-in HTTP client
(`--remote_rm_url http://...`) sends no headers, so it can only reach a service on loopback.

Set KFORGE_URL (default http://127.0.0.1:8000) and KFORGE_TOKEN (the token itself, the value
of the variable `kforge serve --token-env` names). The service splits each query into prompt
and response itself (docs/API.md, /get_reward): only the response is evaluated.

Standard library and torch (which OpenRLHF has).
"""
import json
import os
import time
import urllib.error
import urllib.request

import torch

KFORGE_URL = os.environ.get("KFORGE_URL", "http://127.0.0.1:8000")
TOKEN = os.environ.get("KFORGE_TOKEN", "")
TIMEOUT_S = float(os.environ.get("KFORGE_TIMEOUT_S", "900"))


def _post(body):
    headers = {"Content-Type": "application/json"}
    if TOKEN:
        headers["Authorization"] = "Bearer " + TOKEN
    req = urllib.request.Request(KFORGE_URL.rstrip("/") + "/get_reward",
                                 data=json.dumps(body).encode(), method="POST", headers=headers)
    for attempt in range(6):
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S + 30) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            if e.code != 503:  # 4xx: the request is wrong (a bad label, a wrong token): say so
                raise RuntimeError("kforge: %s" % e.read().decode(errors="replace")) from None
            time.sleep(float(e.headers.get("Retry-After", "5")))  # full: come back later
        except OSError:
            time.sleep(2 ** attempt)
    raise RuntimeError("kforge: the reward service at %s did not answer" % KFORGE_URL)


def reward_func(queries, prompts, labels):
    out = _post({"query": list(queries), "prompts": list(prompts), "labels": list(labels),
                 "timeout_s": TIMEOUT_S})
    rewards = torch.tensor(out["rewards"], dtype=torch.float32)
    return {"rewards": rewards, "scores": torch.tensor(out["scores"], dtype=torch.float32),
            "extra_logs": {k: torch.tensor(v, dtype=torch.float32)
                           for k, v in out["extra_logs"].items()}}
