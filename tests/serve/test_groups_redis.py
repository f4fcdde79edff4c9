"""BDR in Redis mode (kforge serve --redis with a build worker, a private redis-server): groups
whose samples all failed are kept in Redis, survive a restart of the service, are shared by
the servers of one prefix, and are handed out oldest first.

usage: test_groups_redis.py KFORGE [CACHE]
"""
import signal

from common import Cluster, fresh, http, run_test

NO_CODE = "Sorry, no kernel today."


def group(prompt, index):
    return {"problem": "level1/relu", "prompt": prompt, "metadata": {"index": index},
            "group_id": "g%d" % index, "candidates": [fresh(NO_CODE) for _ in range(3)]}


def body(c):
    redis = c.start_redis()
    # A reply without code ends at the build worker's extract stage: no gpu worker needed.
    c.start_worker("build", "build", redis)
    flags = ["--redis", redis, "--bdr-size", "2"]
    url = c.start_serve("serve", flags)
    body = {"groups": [group("A", 1), group("B", 2), group("C", 3)]}
    code, out, _ = http("POST", url + "/v1/groups", body, timeout=300)
    assert code == 200, out
    for g in out["groups"]:
        assert g["all_failed"] and g["bdr_recorded"] and g["rewards"] == [-1.0] * 3, g
    # --bdr-size 2: A, the oldest, is gone; the FIFO is in Redis.
    assert c.redis("LLEN", "kf:bdr:order") == "2", c.redis("LRANGE", "kf:bdr:order", "0", "-1")
    assert c.redis("HLEN", "kf:bdr:entries") == "2"
    code, st, _ = http("GET", url + "/v1/bdr")
    assert code == 200 and st["storage"] == "redis" and st["buffered"] == 2, st
    assert st["evicted_total"] == 1 and st["recorded_total"] == 3, st

    # A restart of the service loses nothing; a second server of the same prefix sees it.
    c.kill("serve", signal.SIGTERM)
    url = c.start_serve("serve2", flags)
    other = c.start_serve("serve3", flags)
    code, st, _ = http("GET", other + "/v1/bdr")
    assert code == 200 and st["buffered"] == 2, st
    code, s, _ = http("GET", url + "/v1/bdr/sample?n=1&p=1")
    assert code == 200 and [e["prompt"] for e in s["replay"]] == ["B"], s
    e = s["replay"][0]
    assert e["problem"] == "level1/relu" and e["metadata"] == {"index": 2}, e
    assert e["group_id"] == "g2" and e["failures"] == 1 and e["samples"] == 3, e
    # The other server hands out what is left; nothing is given twice.
    code, s, _ = http("GET", other + "/v1/bdr/sample?n=3&p=1")
    assert code == 200 and [e["prompt"] for e in s["replay"]] == ["C"] and s["fresh"] == 2, s
    code, s, _ = http("GET", url + "/v1/bdr/sample?n=3&p=1")
    assert code == 200 and s["replay"] == [] and s["buffered"] == 0, s
    code, text, _ = http("GET", url + "/metrics")
    assert "kforge_bdr_groups 0" in text and "kforge_bdr_replayed_total 1" in text, text


def main():
    run_test("test_groups_redis", body)


if __name__ == "__main__":
    main()
