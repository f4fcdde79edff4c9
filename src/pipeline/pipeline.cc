#include "pipeline/pipeline.h"

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "common/hash.h"
#include "eval/decide.h"

namespace kf::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

double MsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// One distinct job and everyone waiting for its verdict.
struct Entry {
  Job job;
  std::string key;
  std::vector<DoneFn> waiters;
  std::vector<StageFn> watchers;  // told where the job is (JobStage)
  bool retried = false;
};

// What a job gets when the pipeline is cancelled before the job ran.
Verdict CancelledVerdict(const Job& job) {
  Verdict v;
  v.problem_id = eval::ProblemId(job.problem);
  v.candidate_hash = Sha256Hex(job.text);
  v.status = VerdictStatus::kInfraError;
  Diagnostic d;
  d.stage = "pipeline";
  d.code = kCancelledCode;
  d.message = "not evaluated: the run was stopped before this candidate's turn";
  v.diagnostics.push_back(d);
  v.feedback = "kforge did not evaluate this candidate (the run was stopped); a rerun will.";
  return v;
}

using EntryPtr = std::shared_ptr<Entry>;

}  // namespace

class Pipeline::Impl {
 public:
  Impl(std::unique_ptr<Stages> stages, PipelineOptions opt)
      : stages_(std::move(stages)), opt_(opt), start_(Clock::now()) {
    if (opt_.queue_capacity == 0) opt_.queue_capacity = 1;
    int lanes = opt_.build_only ? 0 : std::max(1, stages_->lanes());
    lane_busy_ms_.assign(static_cast<size_t>(lanes), 0.0);
    int builders = opt_.sequential ? 1 : std::max(1, opt_.build_threads);
    for (int i = 0; i < builders; ++i) threads_.emplace_back([this] { BuildLoop(); });
    if (!opt_.sequential) {
      for (int l = 0; l < lanes; ++l) threads_.emplace_back([this, l] { ExecLoop(l); });
    }
  }

  ~Impl() { Close(); }

  bool Submit(Job job, DoneFn done, StageFn on_stage, bool may_block) {
    std::string key = job.problem.lexically_normal().string() + "\n" + Sha256Hex(job.text);
    std::unique_lock<std::mutex> lk(mu_);
    while (true) {
      if (closed_) return false;
      if (auto it = inflight_.find(key); it != inflight_.end()) {
        it->second->waiters.push_back(std::move(done));
        if (on_stage) it->second->watchers.push_back(std::move(on_stage));
        ++submitted_;
        ++deduplicated_;
        return true;
      }
      if (intake_.size() < IntakeCapacity()) break;
      if (!may_block) return false;
      intake_space_.wait(lk);  // then look again: an identical job may have arrived meanwhile
    }
    auto e = std::make_shared<Entry>();
    e->job = std::move(job);
    e->key = key;
    e->waiters.push_back(std::move(done));
    if (on_stage) e->watchers.push_back(std::move(on_stage));
    inflight_[key] = e;
    intake_.push_back(e);
    ++submitted_;
    ++unfinished_;
    intake_ready_.notify_one();
    return true;
  }

  void Cancel() {
    std::vector<EntryPtr> dropped;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (cancelled_) return;
      cancelled_ = closed_ = true;
      intake_space_.notify_all();
      for (auto& e : intake_) dropped.push_back(e);
      intake_.clear();
      for (auto& r : ready_) dropped.push_back(r.entry);
      ready_.clear();
      ready_space_.notify_all();
      for (auto& [e, when] : retry_) dropped.push_back(e);
      retry_.clear();
    }
    for (const auto& e : dropped) Deliver(e, CancelledVerdict(e->job), Outcome::kEvaluated);
  }

  void Close() {
    std::lock_guard<std::mutex> close_guard(close_mu_);
    {
      std::unique_lock<std::mutex> lk(mu_);
      if (joined_) return;
      closed_ = true;
      intake_space_.notify_all();  // blocked Submit calls return false
      idle_.wait(lk, [this] { return unfinished_ == 0; });
      stopping_ = true;
      end_ = Clock::now();
      intake_ready_.notify_all();
      ready_cv_.notify_all();
    }
    for (auto& t : threads_) t.join();
    std::lock_guard<std::mutex> lk(mu_);
    joined_ = true;
    // A warm-up already running when the last job was delivered ends during the join, and its
    // lane time counts: the wall clock runs until the lanes are idle, so busy <= wall holds.
    end_ = Clock::now();
  }

  Result<eval::Evaluator::ProblemFacts> Describe(const std::filesystem::path& problem) {
    if (opt_.sequential) return Status::Unavailable("a sequential pipeline has no lane threads");
    if (opt_.build_only) return Status::Unavailable("a build-only pipeline has no lanes");
    auto done = std::make_shared<std::promise<Result<eval::Evaluator::ProblemFacts>>>();
    auto result = done->get_future();
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (closed_) return Status::Unavailable("the pipeline is closed");
      tasks_.push_back([this, problem, done](int lane) {
        done->set_value(stages_->Describe(problem, lane));
      });
      ready_cv_.notify_one();
    }
    return result.get();
  }

  Stats stats() const {
    std::lock_guard<std::mutex> lk(mu_);
    Stats s;
    s.intake_depth = intake_.size();
    s.ready_depth = ready_.size();
    s.in_flight = inflight_.size();
    s.building = static_cast<size_t>(building_);
    s.executing = static_cast<size_t>(executing_);
    s.warming = static_cast<size_t>(warming_);
    s.warm_ms = warm_ms_;
    s.submitted = submitted_;
    s.deduplicated = deduplicated_;
    s.done = done_;
    s.from_store = from_store_;
    s.evaluated = evaluated_;
    s.built = built_;
    s.by_status = by_status_;
    s.warmed = warmed_;
    s.retried = retried_;
    s.lane_busy_ms = lane_busy_ms_;
    s.build_busy_ms = build_busy_ms_;
    s.wall_ms = MsBetween(start_, stopping_ ? end_ : Clock::now());
    return s;
  }

 private:
  struct Ready {
    EntryPtr entry;
    eval::Prepared prepared;
  };

  void BuildLoop() {
    while (true) {
      EntryPtr e;
      {
        std::unique_lock<std::mutex> lk(mu_);
        intake_ready_.wait(lk, [this] { return stopping_ || !intake_.empty(); });
        if (intake_.empty()) return;  // stopping
        e = intake_.front();
        intake_.pop_front();
        intake_space_.notify_one();
      }
      if (opt_.reuse_stored) {
        if (auto v = stages_->Lookup(e->job.problem, e->job.text)) {
          Deliver(e, *v, Outcome::kFromStore);
          continue;
        }
      }
      if (opt_.warm_lanes && !opt_.sequential && !opt_.build_only) {
        std::lock_guard<std::mutex> lk(mu_);
        if (warm_seen_.insert(e->job.problem.lexically_normal().string()).second) {
          warm_.push_back(Job{e->job.problem, "", e->job.problem_trusted});
          ready_cv_.notify_one();
        }
      }
      {
        std::lock_guard<std::mutex> lk(mu_);
        ++building_;
      }
      Notify(e, JobStage::kBuilding, Verdict{});
      auto t0 = Clock::now();
      eval::Prepared p = stages_->Prepare(e->job);
      {
        std::lock_guard<std::mutex> lk(mu_);
        build_busy_ms_ += MsBetween(t0, Clock::now());
        ++evaluated_;
        if (--building_ == 0) ready_cv_.notify_all();  // a retry may be due now
      }
      if (p.final) {  // scored and stored without a lane (Evaluator's contract)
        Deliver(e, stages_->Execute(std::move(p), 0), Outcome::kEvaluated);
      } else if (opt_.build_only) {  // its lanes are elsewhere
        Deliver(e, p.verdict, Outcome::kBuilt);
      } else if (opt_.sequential) {
        Notify(e, JobStage::kExecuting, p.verdict);
        Deliver(e, TimedExecute(std::move(p), 0), Outcome::kEvaluated);
      } else {
        Notify(e, JobStage::kBuilt, p.verdict);
        std::unique_lock<std::mutex> lk(mu_);
        ready_space_.wait(lk, [this] { return cancelled_ || ready_.size() < opt_.queue_capacity; });
        if (cancelled_) {  // built, but its lane turn will not come
          lk.unlock();
          Deliver(e, CancelledVerdict(e->job), Outcome::kEvaluated);
          continue;
        }
        ready_.push_back({e, std::move(p)});
        ready_cv_.notify_one();
      }
    }
  }

  // A job waiting in retry_ may run: no build is running (the load that spoiled its timing
  // was theirs), or it has waited long enough.
  bool RetryDue() const {
    return !retry_.empty() &&
           ((building_ == 0 && intake_.empty()) || Clock::now() >= retry_.front().second);
  }

  void ExecLoop(int lane) {
    while (true) {
      Ready r;
      std::optional<Job> warm;
      EntryPtr again;
      std::function<void(int)> task;
      {
        std::unique_lock<std::mutex> lk(mu_);
        auto wake = [this] {
          return stopping_ || !tasks_.empty() || !ready_.empty() || !warm_.empty() || RetryDue();
        };
        while (!wake()) {
          if (retry_.empty()) {
            ready_cv_.wait(lk);
          } else {
            ready_cv_.wait_until(lk, retry_.front().second);
          }
        }
        if (!tasks_.empty()) {  // short and waited for by a caller: first
          task = std::move(tasks_.front());
          tasks_.pop_front();
        } else if (!ready_.empty()) {
          r = std::move(ready_.front());
          ready_.pop_front();
          ready_space_.notify_one();
          ++executing_;
        } else if (RetryDue()) {
          again = retry_.front().first;
          retry_.pop_front();
          ++retried_;
          ++executing_;
        } else if (stopping_) {
          return;  // warm-ups not yet started are dropped: nothing needs them
        } else {
          warm = warm_.front();
          warm_.pop_front();
          ++warming_;
        }
      }
      if (task) {
        auto t0 = Clock::now();
        task(lane);
        std::lock_guard<std::mutex> lk(mu_);
        lane_busy_ms_[static_cast<size_t>(lane)] += MsBetween(t0, Clock::now());
        continue;
      }
      if (again) {
        eval::Prepared p = stages_->Prepare(again->job);  // cached
        Notify(again, JobStage::kExecuting, p.verdict);
        Verdict v = p.final ? stages_->Execute(std::move(p), lane) : TimedExecute(std::move(p), lane);
        Executed();
        Deliver(again, v, Outcome::kEvaluated);
        continue;
      }
      if (warm) {
        auto t0 = Clock::now();
        stages_->Warm(*warm, lane);
        std::lock_guard<std::mutex> lk(mu_);
        const double ms = MsBetween(t0, Clock::now());
        lane_busy_ms_[static_cast<size_t>(lane)] += ms;
        warm_ms_ += ms;
        ++warmed_;
        --warming_;
        continue;
      }
      Notify(r.entry, JobStage::kExecuting, r.prepared.verdict);
      Verdict v = TimedExecute(std::move(r.prepared), lane);
      Executed();
      const bool lane_died = eval::LaneDied(v);
      if (opt_.retry_busy && !r.entry->retried && (lane_died || eval::SpoiledByLoad(v))) {
        std::lock_guard<std::mutex> lk(mu_);
        r.entry->retried = true;
        // A dead lane's job may run at once (the lane is started anew); a busy one waits for
        // the builds that spoiled it.
        retry_.emplace_back(r.entry, Clock::now() + (lane_died ? std::chrono::milliseconds(0)
                                                               : opt_.retry_after));
        ready_cv_.notify_all();
        continue;
      }
      Deliver(r.entry, v, Outcome::kEvaluated);
    }
  }

  size_t IntakeCapacity() const {
    return opt_.intake_capacity ? opt_.intake_capacity : opt_.queue_capacity;
  }

  void Executed() {
    std::lock_guard<std::mutex> lk(mu_);
    --executing_;
  }

  // Tells the job's watchers where it is; outside the lock, like Deliver.
  void Notify(const EntryPtr& e, JobStage stage, const Verdict& so_far) {
    std::vector<StageFn> watchers;
    {
      std::lock_guard<std::mutex> lk(mu_);
      watchers = e->watchers;
    }
    for (auto& w : watchers) w(stage, so_far);
  }

  Verdict TimedExecute(eval::Prepared p, int lane) {
    auto t0 = Clock::now();
    Verdict v = stages_->Execute(std::move(p), lane);
    std::lock_guard<std::mutex> lk(mu_);
    lane_busy_ms_[static_cast<size_t>(lane)] += MsBetween(t0, Clock::now());
    return v;
  }

  void Deliver(const EntryPtr& e, const Verdict& v, Outcome how) {
    std::vector<DoneFn> waiters;
    {
      std::lock_guard<std::mutex> lk(mu_);
      inflight_.erase(e->key);  // later identical jobs start afresh (and find the store)
      waiters.swap(e->waiters);
      ++done_;
      if (how == Outcome::kFromStore) ++from_store_;
      if (how == Outcome::kBuilt) {
        ++built_;
      } else {
        ++by_status_[StatusName(v.status)];
      }
    }
    for (auto& w : waiters) {
      if (w) w(v, how);
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (--unfinished_ == 0) idle_.notify_all();
  }

  std::unique_ptr<Stages> stages_;
  PipelineOptions opt_;
  const Clock::time_point start_;
  std::vector<std::thread> threads_;
  std::mutex close_mu_;  // serialises Close

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable intake_ready_, intake_space_, ready_cv_, ready_space_, idle_;
  std::deque<EntryPtr> intake_;
  std::deque<Ready> ready_;
  std::deque<Job> warm_;  // problems to prepare on an idle lane (text empty)
  std::deque<std::function<void(int lane)>> tasks_;  // lane work for a caller (Describe)
  std::deque<std::pair<EntryPtr, Clock::time_point>> retry_;  // spoiled by load; retry by then
  int building_ = 0;                        // Prepare calls running
  int executing_ = 0;                       // Execute calls running
  int warming_ = 0;                         // Warm calls running
  std::set<std::string> warm_seen_;         // every problem ever queued there
  std::map<std::string, EntryPtr> inflight_;
  size_t unfinished_ = 0;  // accepted distinct jobs whose callbacks have not all returned
  bool closed_ = false, stopping_ = false, joined_ = false, cancelled_ = false;
  Clock::time_point end_;
  size_t submitted_ = 0, deduplicated_ = 0, done_ = 0, from_store_ = 0, evaluated_ = 0, warmed_ = 0,
         retried_ = 0, built_ = 0;
  std::map<std::string, size_t> by_status_;
  std::vector<double> lane_busy_ms_;
  double build_busy_ms_ = 0;
  double warm_ms_ = 0;  // inside Warm, all lanes summed
};

Pipeline::Pipeline(eval::Evaluator* ev, PipelineOptions opt) : Pipeline(EvaluatorStages(ev), opt) {}
Pipeline::Pipeline(std::unique_ptr<Stages> stages, PipelineOptions opt)
    : impl_(std::make_unique<Impl>(std::move(stages), opt)) {}
Pipeline::~Pipeline() = default;

bool Pipeline::Submit(Job job, DoneFn done, StageFn on_stage) {
  return impl_->Submit(std::move(job), std::move(done), std::move(on_stage), true);
}
bool Pipeline::TrySubmit(Job job, DoneFn done, StageFn on_stage) {
  return impl_->Submit(std::move(job), std::move(done), std::move(on_stage), false);
}
Verdict Pipeline::Evaluate(Job job, StageFn on_stage) {
  auto done = std::make_shared<std::promise<Verdict>>();
  auto verdict = done->get_future();
  Job copy = job;
  if (!Submit(std::move(job), [done](const Verdict& v, Outcome) { done->set_value(v); },
              std::move(on_stage))) {
    Verdict v = CancelledVerdict(copy);
    v.diagnostics[0].message = "not evaluated: the pipeline is closed";
    return v;
  }
  return verdict.get();
}
Result<eval::Evaluator::ProblemFacts> Pipeline::Describe(const std::filesystem::path& problem) {
  return impl_->Describe(problem);
}
void Pipeline::Close() { impl_->Close(); }
void Pipeline::Cancel() { impl_->Cancel(); }
Stats Pipeline::stats() const { return impl_->stats(); }

}  // namespace kf::pipeline
