"""The web UI in a real browser (Debian's headless Chromium, through tests/web/devtools.py).

Two bench runs of two models are recorded in a fresh store (the CPU ReLU example, the H08
timer-patch cheat, a reply without ModelNew and a kernel that does not compile); then `kforge serve` with a token serves the UI over that store, and the
browser logs in, loads every page, opens the cheat's verdict and finds its rule at its line,
submits the ReLU example and watches its `ok` verdict arrive, submits a hostile text and finds
it shown as text (nothing of it runs), watches the live view, and logs out. Screenshots (PNG)
go to OUT.

Usage: test_browser.py KFORGE CACHE OUT
CACHE keeps compiled artifacts between runs (its store is removed at the start: each run sees
only its own runs and jobs). Exit 0 when every check passes; 77 (skipped) without Chromium.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "serve"))
import devtools  # noqa: E402
from common import free_port, wait_until  # noqa: E402

RELU = os.path.join(ROOT, "examples", "cpu", "relu.py")
CHEAT = os.path.join(ROOT, "tests", "redteam", "cpu", "h08_patch_perf_counter.py")
TOKEN = "kforge-browser-test-" + uuid.uuid4().hex
# Quick evaluation settings that still time eager PyTorch, so runs have speedups to show.
EVAL_FLAGS = ["--backend", "cpu", "--trials", "2", "--timing-budget-ms", "300",
              "--build-workers", "1"]
HOSTILE = ("Here is my kernel </textarea></script><script>window.__pwned = 1</script>"
           "<img src=x onerror=\"window.__pwned = 2\"> & no code block at all\n")


class NoRedirect(urllib.request.HTTPErrorProcessor):
    def http_response(self, request, response):
        return response
    https_response = http_response


def fetch(url, data=None, headers=None):
    """(status, headers, body) without following redirects."""
    req = urllib.request.Request(url, data=data, headers=headers or {})
    opener = urllib.request.build_opener(NoRedirect)
    with opener.open(req, timeout=30) as r:
        return r.status, dict(r.headers), r.read().decode()


def bench(kforge, tmp, cache, model):
    out = subprocess.run([kforge, "bench", "--problems", os.path.join(tmp, "problems", "level1"),
                          "--samples", os.path.join(tmp, "samples"), "--out",
                          os.path.join(tmp, "out-" + model), "--cache", cache, "--model", model,
                          "--progress-interval-s", "30"] + EVAL_FLAGS,
                         capture_output=True, text=True, timeout=900)
    print(out.stdout[-600:] + out.stderr[-600:])
    assert out.returncode == 0, "kforge bench failed (%d)" % out.returncode
    m = re.search(r"recorded as run (\d+) \(model ([^)]*)\)", out.stdout)
    assert m and m.group(2) == model, "bench recorded no run: " + out.stdout[-300:]
    return int(m.group(1))


def main():
    kforge, cache, out_dir = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    if not os.access(devtools.CHROMIUM, os.X_OK):
        print("skipped: no %s (apt-get install chromium; scripts/test.sh does)" % devtools.CHROMIUM)
        return 77
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(cache, exist_ok=True)
    for f in os.listdir(cache):  # a fresh store; artifacts kept
        if f.startswith("kforge.db"):
            os.remove(os.path.join(cache, f))
    tmp = tempfile.mkdtemp(prefix="kf-web-test-")
    serve = browser = None
    t0 = time.time()
    try:
        os.makedirs(os.path.join(tmp, "problems", "level1"))
        shutil.copy(os.path.join(ROOT, "problems", "level1", "relu.py"),
                    os.path.join(tmp, "problems", "level1"))
        sdir = os.path.join(tmp, "samples", "level1", "relu")
        os.makedirs(sdir)
        shutil.copy(RELU, os.path.join(sdir, "sample_0.py"))
        shutil.copy(CHEAT, os.path.join(sdir, "sample_1.py"))
        broken = os.path.join(ROOT, "examples", "cpu", "broken")
        shutil.copy(os.path.join(broken, "no_model_new.py"), os.path.join(sdir, "sample_2.py"))
        shutil.copy(os.path.join(broken, "compile_error.py"), os.path.join(sdir, "sample_3.py"))
        run_a = bench(kforge, tmp, cache, "model-a")
        run_b = bench(kforge, tmp, cache, "model-b")  # the same samples: answered by the store
        print("bench runs %d and %d recorded (%.0f s)" % (run_a, run_b, time.time() - t0))

        port = free_port()
        url = "http://127.0.0.1:%d" % port
        env = dict(os.environ, KFORGE_UI_TEST_TOKEN=TOKEN)
        log = open(os.path.join(tmp, "serve.log"), "w")
        serve = subprocess.Popen([kforge, "serve", "--port", str(port), "--problems",
                                  os.path.join(ROOT, "problems"), "--cache", cache,
                                  "--token-env", "KFORGE_UI_TEST_TOKEN"] + EVAL_FLAGS,
                                 stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                 start_new_session=True)
        wait_until(lambda: fetch_ok(url + "/healthz"), 60, "kforge serve")

        # Without the token: the pages send the browser to the login form, the API says 401.
        code, hdrs, _ = fetch(url + "/ui/runs")
        assert code == 303 and hdrs["Location"] == "/ui/login?next=%2Fui%2Fruns", (code, hdrs)
        assert fetch(url + "/v1/problems")[0] == 401
        assert fetch(url + "/ui/submit", data=b"problem=level1%2Frelu&candidate=x")[0] == 401

        browser = devtools.Browser()
        def shot(name, full_page=True):
            print("screenshot", browser.screenshot(os.path.join(out_dir, name), full_page))
        browser.goto(url + "/ui/runs")
        browser.wait_for("location.pathname === '/ui/login'", 10, "the login form")
        browser.evaluate("document.getElementById('token').value = %s" % json.dumps(TOKEN))
        browser.evaluate("document.getElementById('login').click()")
        browser.wait_for("location.pathname === '/ui/runs' && !!document.getElementById('runs')",
                         15, "the runs page after logging in")
        assert "kforge_session" not in browser.evaluate("document.cookie"), "the cookie is HttpOnly"
        runs = browser.evaluate("document.getElementById('runs').innerText")
        assert "model-a" in runs and "model-b" in runs, runs

        browser.goto("%s/ui/runs/%d" % (url, run_a))
        samples = browser.evaluate("document.getElementById('samples').innerText")
        for status in ("ok", "cheat", "format_error", "compile_error"):
            assert status in samples, (status, samples)
        assert browser.evaluate("document.querySelectorAll('svg').length") >= 3
        shot("run.png", full_page=False)
        browser.goto("%s/ui/compare?a=%d&b=%d" % (url, run_a, run_b))
        assert "#%d model-b" % run_b in browser.evaluate("document.body.innerText")
        browser.goto(url + "/ui/problems")
        assert "level1/relu" in browser.evaluate("document.getElementById('problems').innerText")
        browser.goto(url + "/ui/problem?id=level1/relu")
        board = browser.evaluate("document.getElementById('leaderboard').innerText")
        assert "ok" in board and "cheat" in board, board  # each kernel once, best first
        models = browser.evaluate("document.getElementById('models').innerText")
        assert "model-a" in models and "model-b" in models, models
        assert "class Model" in browser.evaluate("document.querySelector('table.src').innerText")

        # The cheat's page: its rule, the evidence, the diagnostic under its line.
        browser.goto("%s/ui/runs/%d" % (url, run_a))
        browser.evaluate("document.querySelector('#samples .st-cheat').parentElement.click()")
        browser.wait_for("location.pathname.startsWith('/ui/verdicts/')", 10, "the cheat's page")
        browser.wait_for("document.readyState === 'complete'", 10)
        rule = browser.evaluate("document.querySelector('section.rule h2').innerText")
        assert "H08" in rule and "timer-patch" in rule, rule
        # What the rule catches and its hint are the catalog's, as `kforge rules` prints them.
        listed = subprocess.run([kforge, "rules"], capture_output=True, text=True, check=True).stdout
        h08 = listed[listed.index("H08  timer-patch"):].split("\n\n")[0]
        catches = re.search(r"^  catches: (.*)$", h08, re.M).group(1)
        hint = re.search(r"^  hint: (.*)$", h08, re.M).group(1)
        assert browser.evaluate("document.querySelector('section.rule p.catches').innerText") == \
            "Catches: %s." % catches
        assert browser.evaluate("document.querySelector('section.rule p.hint').innerText") == hint
        line = int(browser.evaluate(
            "document.querySelector('section.rule a').getAttribute('href').slice(2)"))
        hit = browser.evaluate("document.getElementById('L%d').className" % line)
        assert hit == "hit", hit
        assert "perf_counter" in browser.evaluate("document.getElementById('L%d').innerText" % line)
        shot("cheat.png", full_page=False)

        # Submit the ReLU example (made a new job by a comment) and watch its verdict arrive.
        relu = open(RELU).read() + "\n# browser test %s\n" % uuid.uuid4().hex
        submit(browser, url, relu)
        browser.wait_for("!!document.querySelector('.verdict-head .st-ok')", 300,
                         "the ok verdict of the submitted ReLU")
        head = browser.evaluate("document.querySelector('.verdict-head').innerText")
        assert re.search(r"(\d+)/\1 trials", head), head
        assert browser.evaluate("document.querySelectorAll('#trials tr.fail').length") == 0
        assert browser.evaluate("document.querySelectorAll('#trials tr.pass').length") >= 1
        shot("job.png")
        print("ok verdict shown (%.0f s)" % (time.time() - t0))

        # A hostile reply: shown as text, nothing of it runs or renders.
        submit(browser, url, HOSTILE)
        browser.wait_for("!!document.querySelector('.verdict-head .st')", 120, "the hostile verdict")
        assert browser.evaluate("typeof window.__pwned") == "undefined", "a script ran"
        assert browser.evaluate("document.querySelectorAll('main img, main script').length") == 0
        shown = browser.evaluate("document.querySelector('table.src').innerText")
        assert "<img src=x onerror=" in shown and "</script>" in shown, shown

        browser.goto(url + "/ui/live")
        recent = browser.evaluate("document.getElementById('recent').innerText")
        assert "level1/relu" in recent and "ui" in recent, recent
        browser.wait_for("document.getElementById('live').innerText.includes('last minute')", 10)
        shot("live.png")

        browser.evaluate("document.querySelector('form.logout button').click()")
        browser.wait_for("location.pathname === '/ui/login'", 10, "the login form after logging out")
        browser.goto(url + "/ui/runs")
        browser.wait_for("location.pathname === '/ui/login'", 10, "a login after logging out")
        print("browser test passed in %.0f s" % (time.time() - t0))
        return 0
    finally:
        if browser:
            browser.stop()
        if serve:
            serve.terminate()
            try:
                serve.wait(timeout=30)
            except subprocess.TimeoutExpired:
                serve.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def fetch_ok(url):
    try:
        return fetch(url)[0] == 200
    except OSError:
        return False


def submit(browser, url, text):
    browser.goto(url + "/ui/submit?problem=level1/relu")
    browser.evaluate("document.getElementById('candidate').value = %s" % json.dumps(text))
    browser.evaluate("document.getElementById('submit').click()")
    browser.wait_for("location.pathname.startsWith('/ui/jobs/')", 30, "the job's page")


if __name__ == "__main__":
    sys.exit(main())
