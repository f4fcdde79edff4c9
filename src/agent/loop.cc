// The loop: per sample, ask, extract, verify, feed back; stop at the first pass (or at the
// target speedup), at the last turn, or when the model server fails.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "agent/agent.h"
#include "extract/extract.h"

namespace kf::agent {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double SpeedupOf(const Verdict& v) { return v.speedup_vs_eager.value_or(0.0); }

// Strictly better: correct, then faster. Ties keep the earlier one.
bool Better(const Verdict& a, const Verdict* b) {
  if (a.status != VerdictStatus::kOk) {
    return false;
  }
  return b == nullptr || SpeedupOf(a) > SpeedupOf(*b);
}

class Run {
 public:
  Run(const GenerateOptions& opt, const PromptTemplates& t, const ProblemContext& c,
      model::ModelClient& client, const EvaluateFn& evaluate, const Callbacks& cb)
      : opt_(opt), t_(t), c_(c), client_(client), evaluate_(evaluate), cb_(cb) {}

  Trajectory Sample(int index);
  Status model_error() {
    std::lock_guard<std::mutex> g(mu_);
    return model_error_;
  }

 private:
  void Report(const Turn& turn) {
    std::lock_guard<std::mutex> g(mu_);
    if (cb_.on_turn) {
      cb_.on_turn(turn);
    }
  }
  Turn Evaluate(Turn turn, const std::string& text) {
    auto t0 = Clock::now();
    turn.verdict = evaluate_(text);
    turn.eval_ms = MsSince(t0);
    turn.reward = turn.verdict->reward;
    return turn;
  }

  const GenerateOptions& opt_;
  const PromptTemplates& t_;
  const ProblemContext& c_;
  model::ModelClient& client_;
  const EvaluateFn& evaluate_;
  const Callbacks& cb_;
  std::atomic<bool> abort_{false};
  std::mutex mu_;
  Status model_error_;  // guarded by mu_
};

Trajectory Run::Sample(int index) {
  Trajectory tr;
  tr.sample = index;
  std::string prev_candidate;
  const Verdict* prev = nullptr;
  auto keep = [&](Turn turn) {
    Report(turn);
    tr.turns.push_back(std::move(turn));
    return &tr.turns.back();
  };
  if (!opt_.initial_candidate.empty()) {
    Turn t0;
    t0.sample = index;
    t0.turn = 0;
    t0.candidate = opt_.initial_candidate;
    keep(Evaluate(std::move(t0), opt_.initial_candidate));
    prev_candidate = opt_.initial_candidate;
  }
  model::Sampling s = opt_.sampling;
  s.n = 1;
  if (s.seed) {
    *s.seed += index;
  }
  tr.stop_reason = "turns_exhausted";
  for (int turn = 1; turn <= opt_.turns; ++turn) {
    // tr.turns never reallocates under `prev`: it is re-read after each push.
    prev = tr.turns.empty() ? nullptr : &*tr.turns.back().verdict;
    if (abort_) {
      tr.stop_reason = "aborted";
      break;
    }
    Turn t;
    t.sample = index;
    t.turn = turn;
    t.messages = prev ? RepairPrompt(t_, c_, turn, prev_candidate, *prev, opt_.optimize_until)
                      : FirstPrompt(t_, c_);
    auto m0 = Clock::now();
    auto reply = client_.Chat(t.messages, s);
    t.model_ms = MsSince(m0);
    if (!reply.ok()) {
      t.error = reply.status().message();
      {
        std::lock_guard<std::mutex> g(mu_);
        if (model_error_.ok()) {
          model_error_ = reply.status();
        }
      }
      abort_ = true;  // the server is down or broken for every sample alike
      keep(std::move(t));
      tr.stop_reason = "model_error";
      break;
    }
    const model::Choice& choice = reply->choices.front();
    t.reply = choice.content;
    t.reasoning = choice.reasoning;
    t.finish_reason = choice.finish_reason;
    t.usage = reply->usage;
    // The extracted code is what gets verified and shown back, so the feedback's line numbers
    // are the candidate's own; a reply with no code is verified as is (format_error).
    extract::Candidate cand = extract::Extract(choice.content);
    t.candidate = cand.from_reply || cand.ok() ? cand.code : "";
    const std::string text = t.candidate.empty() ? choice.content : t.candidate;
    const Turn* done = keep(Evaluate(std::move(t), text));
    prev_candidate = text;
    const Verdict& v = *done->verdict;
    if (v.status != VerdictStatus::kOk) {
      continue;
    }
    if (!opt_.optimize_until) {
      tr.stop_reason = "passed";
      break;
    }
    if (SpeedupOf(v) >= *opt_.optimize_until) {
      tr.stop_reason = "target_reached";
      break;
    }
  }
  // Rewards of the model's turns (turn 0 is the user's candidate, not the model's).
  const Verdict* best = nullptr;
  for (size_t i = 0; i < tr.turns.size(); ++i) {
    const Turn& t = tr.turns[i];
    if (!t.verdict) {
      continue;
    }
    if (Better(*t.verdict, best)) {
      best = &*t.verdict;
      tr.best_turn = t.turn;
    }
    if (t.turn == 0) {
      continue;
    }
    if (t.reward) {
      tr.rewards.push_back(*t.reward);
    }
    if (tr.first_pass_turn == 0 && t.verdict->status == VerdictStatus::kOk) {
      tr.first_pass_turn = t.turn;
    }
  }
  tr.prime_echo = score::PrimeEcho(tr.rewards, tr.first_pass_turn, opt_.prime_echo);
  {
    std::lock_guard<std::mutex> g(mu_);
    if (cb_.on_trajectory) {
      cb_.on_trajectory(tr);
    }
  }
  return tr;
}

}  // namespace

GenerateResult Generate(const GenerateOptions& opt, const PromptTemplates& templates,
                        const ProblemContext& context, model::ModelClient& client,
                        const EvaluateFn& evaluate, const Callbacks& callbacks) {
  Run run(opt, templates, context, client, evaluate, callbacks);
  GenerateResult out;
  out.trajectories.resize(static_cast<size_t>(std::max(0, opt.samples)));
  std::vector<std::thread> threads;
  for (int i = 0; i < opt.samples; ++i) {
    threads.emplace_back([&, i] { out.trajectories[static_cast<size_t>(i)] = run.Sample(i); });
  }
  for (auto& t : threads) {
    t.join();
  }
  out.model_error = run.model_error();
  const Verdict* best = nullptr;
  for (const auto& tr : out.trajectories) {
    for (const auto& t : tr.turns) {
      if (t.verdict && Better(*t.verdict, best)) {
        best = &*t.verdict;
        out.best = Best{tr.sample, t.turn, t.candidate, *t.verdict};
      }
    }
  }
  return out;
}

}  // namespace kf::agent
