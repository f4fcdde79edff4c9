// kforge web UI: its only script. It fetches pages of this same server and nothing else; the
// pages work without it, only less live.
(function () {
  "use strict";

  // A job's page: poll the job's state; reload once its verdict is there.
  var poll = document.querySelector("[data-poll]");
  if (poll) {
    var url = poll.getAttribute("data-poll");
    var tick = function () {
      fetch(url, { credentials: "same-origin", cache: "no-store" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (j) {
          if (j && (j.state === "done" || j.state === "lost")) {
            location.reload();
          } else {
            setTimeout(tick, 1000);
          }
        })
        .catch(function () { setTimeout(tick, 3000); });
    };
    setTimeout(tick, 1000);
  }

  // The live view: a fresh panel (HTML the server escaped) every two seconds.
  var live = document.querySelector("[data-refresh]");
  if (live) {
    var src = live.getAttribute("data-refresh");
    var refresh = function () {
      fetch(src, { credentials: "same-origin", cache: "no-store" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (html !== null) live.innerHTML = html;
          setTimeout(refresh, 2000);
        })
        .catch(function () { setTimeout(refresh, 5000); });
    };
    setTimeout(refresh, 2000);
  }

  // The submit form: one evaluation per click.
  var form = document.getElementById("submit-form");
  if (form) {
    form.addEventListener("submit", function () {
      var b = document.getElementById("submit");
      if (b) { b.disabled = true; b.textContent = "Submitting…"; }
    });
    window.addEventListener("pageshow", function () {
      var b = document.getElementById("submit");
      if (b) { b.disabled = false; b.textContent = "Evaluate"; }
    });
  }
})();
