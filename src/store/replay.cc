// The store's replay table (migration 2): the reward service's BDR buffer.
#include <algorithm>

#include "store/sqlite.h"
#include "store/store.h"

namespace kf::store {

using nlohmann::json;

Result<int64_t> Store::PushReplay(const std::string& key, const json& value, int64_t capacity) {
  // The value may carry a trainer's prompt in any bytes; replace invalid UTF-8 rather than throw.
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  const int64_t now_ms = NowMs();
  int64_t removed = 0;
  std::lock_guard<std::mutex> lock(mu_);
  Status s = db_->InTransaction("replay push", [&]() -> Status {
    auto q = db_->Prepare(
        "INSERT INTO replay(key, value_json, failures, created_at_ms, updated_at_ms) "
        "VALUES (?, ?, 1, ?, ?) ON CONFLICT(key) DO UPDATE SET "
        "value_json = excluded.value_json, failures = failures + 1, "
        "updated_at_ms = excluded.updated_at_ms");
    if (!q.ok()) return q.status();
    Statement& st = **q;
    for (Status b : {st.Bind(1, key), st.Bind(2, text), st.Bind(3, now_ms), st.Bind(4, now_ms)}) {
      if (!b.ok()) return b;
    }
    if (auto r = st.Step(); !r.ok()) return r.status();
    auto del = db_->Prepare(
        "DELETE FROM replay WHERE seq IN (SELECT seq FROM replay ORDER BY seq DESC "
        "LIMIT -1 OFFSET ?)");
    if (!del.ok()) return del.status();
    if (Status b = (*del)->Bind(1, std::max<int64_t>(capacity, 0)); !b.ok()) return b;
    if (auto r = (*del)->Step(); !r.ok()) return r.status();
    removed = db_->Changes();
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return removed;
}

Result<std::vector<Store::ReplayRow>> Store::TakeReplay(int64_t n) {
  std::vector<ReplayRow> rows;
  std::lock_guard<std::mutex> lock(mu_);
  Status s = db_->InTransaction("replay take", [&]() -> Status {
    auto q = db_->Prepare(
        "SELECT seq, key, value_json, failures, created_at_ms, updated_at_ms FROM replay "
        "ORDER BY seq LIMIT ?");
    if (!q.ok()) return q.status();
    if (Status b = (*q)->Bind(1, std::max<int64_t>(n, 0)); !b.ok()) return b;
    int64_t last_seq = -1;
    for (;;) {
      auto row = (*q)->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      ReplayRow r;
      last_seq = (*q)->Int(0);
      r.key = (*q)->Text(1);
      r.value = json::parse((*q)->Text(2), nullptr, /*allow_exceptions=*/false);
      if (r.value.is_discarded()) {
        return Status::Internal("replay entry '" + r.key + "' is not valid JSON");
      }
      r.failures = (*q)->Int(3);
      r.created_at_ms = (*q)->Int(4);
      r.updated_at_ms = (*q)->Int(5);
      rows.push_back(std::move(r));
    }
    if (rows.empty()) return Status::Ok();
    auto del = db_->Prepare("DELETE FROM replay WHERE seq <= ?");
    if (!del.ok()) return del.status();
    if (Status b = (*del)->Bind(1, last_seq); !b.ok()) return b;
    return (*del)->Step().status();
  });
  if (!s.ok()) return s;
  return rows;
}

Result<int64_t> Store::CountReplay() {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare("SELECT COUNT(*) FROM replay");
  if (!q.ok()) return q.status();
  auto row = (*q)->Step();
  if (!row.ok()) return row.status();
  return (*q)->Int(0);
}

}  // namespace kf::store
