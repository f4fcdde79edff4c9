"""slime reward function (`--custom-rm-path slime_reward.kforge_rm`, with this folder on
PYTHONPATH) that asks a kforge reward service, sending its bearer token: slime's built-in
`--rm-type remote_rm` client sends no headers, so it can only reach a service on loopback.

Set KFORGE_URL (default http://127.0.0.1:8000) and KFORGE_TOKEN (the token itself). The
service evaluates only the answer in the response (docs/API.md, /slime/reward).

Standard library only; the blocking call runs in a thread so slime's event loop goes on.
"""
import asyncio
import json
import os
import time
import urllib.error
import urllib.request

KFORGE_URL = os.environ.get("KFORGE_URL", "http://127.0.0.1:8000")
TOKEN = os.environ.get("KFORGE_TOKEN", "")
TIMEOUT_S = float(os.environ.get("KFORGE_TIMEOUT_S", "900"))


def _reward(prompt, response, label):
    headers = {"Content-Type": "application/json"}
    if TOKEN:
        headers["Authorization"] = "Bearer " + TOKEN
    body = {"prompt": prompt, "response": response, "label": label, "timeout_s": TIMEOUT_S}
    req = urllib.request.Request(KFORGE_URL.rstrip("/") + "/slime/reward",
                                 data=json.dumps(body).encode(), method="POST", headers=headers)
    for attempt in range(6):
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S + 30) as r:
                return float(json.loads(r.read()))
        except urllib.error.HTTPError as e:
            if e.code != 503:
                raise RuntimeError("kforge: %s" % e.read().decode(errors="replace")) from None
            time.sleep(float(e.headers.get("Retry-After", "5")))
        except OSError:
            time.sleep(2 ** attempt)
    raise RuntimeError("kforge: the reward service at %s did not answer" % KFORGE_URL)


async def kforge_rm(args, sample, **kwargs):
    return await asyncio.to_thread(_reward, sample.prompt, sample.response, sample.label)
