#include "common/protocol.h"

#include <cstdio>
#include <cstdlib>

namespace kf::protocol {
using nlohmann::json;
using nlohmann::ordered_json;

extern const char kProtocolJson[];  // generated from runner/protocol.json

namespace {

bool IsSimple(const json& v, std::string_view type) {
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();  // signed or unsigned, never bool
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "null") return v.is_null();
  return type == "any";
}

// `type` is a simple type, array<T>, or alternatives joined by '|'.
bool Is(const json& v, std::string_view type) {
  while (!type.empty()) {
    const size_t bar = type.find('|');
    std::string_view alt = type.substr(0, bar);
    type = bar == std::string_view::npos ? std::string_view() : type.substr(bar + 1);
    if (alt.size() > 7 && alt.substr(0, 6) == "array<" && alt.back() == '>') {
      if (!v.is_array()) continue;
      const std::string_view item = alt.substr(6, alt.size() - 7);
      bool all = true;
      for (const auto& x : v) all = all && Is(x, item);
      if (all) return true;
    } else if (IsSimple(v, alt)) {
      return true;
    }
  }
  return false;
}

const char* TypeOf(const json& v) {
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  return "null";
}

bool IsValidSpec(std::string_view spec) {
  if (!spec.empty() && spec.back() == '?') spec.remove_suffix(1);
  while (!spec.empty()) {
    const size_t bar = spec.find('|');
    std::string_view alt = spec.substr(0, bar);
    spec = bar == std::string_view::npos ? std::string_view() : spec.substr(bar + 1);
    if (alt.size() > 7 && alt.substr(0, 6) == "array<" && alt.back() == '>')
      alt = alt.substr(6, alt.size() - 7);
    static const char* kTypes[] = {"string", "integer", "number", "boolean",
                                   "object", "array",   "null",   "any"};
    bool known = false;
    for (const char* t : kTypes) known = known || alt == t;
    if (!known) return false;
  }
  return true;
}

Status CheckSpecs(const ordered_json& fields, const std::string& where) {
  if (!fields.is_object())
    return Status::Invalid("protocol schema: " + where + " is not an object");
  for (const auto& [name, spec] : fields.items()) {
    if (!spec.is_string() || !IsValidSpec(spec.get<std::string>()))
      return Status::Invalid("protocol schema: " + where + "." + name + " has no valid type");
  }
  return Status::Ok();
}

}  // namespace

Status CheckFields(const ordered_json& fields, const json& msg, const std::string& what,
                   std::initializer_list<std::string_view> skip) {
  if (!msg.is_object()) return Status::Invalid(what + ": not a JSON object");
  for (const auto& [name, spec_json] : fields.items()) {
    std::string_view spec = spec_json.get_ref<const std::string&>();
    const bool optional = !spec.empty() && spec.back() == '?';
    if (optional) spec.remove_suffix(1);
    auto it = msg.find(name);
    if (it == msg.end()) {
      if (!optional) return Status::Invalid(what + ": missing required field '" + name + "'");
      continue;
    }
    if (!Is(*it, spec)) {
      return Status::Invalid(what + ": field '" + name + "' must be " + std::string(spec) +
                             ", not " + TypeOf(*it));
    }
  }
  for (const auto& [name, value] : msg.items()) {
    bool skipped = false;
    for (std::string_view s : skip) skipped = skipped || name == s;
    if (!skipped && !fields.contains(name))
      return Status::Invalid(what + ": unknown field '" + name + "'");
  }
  return Status::Ok();
}

Result<Schema> Schema::Parse(std::string_view text) {
  ordered_json j = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("version") || !j["version"].is_number_integer() ||
      !j.contains("services") || !j["services"].is_object()) {
    return Status::Invalid("protocol schema: needs an integer version and a services object");
  }
  Schema schema;
  schema.version_ = j["version"].get<int>();
  for (const auto& [sname, sj] : j["services"].items()) {
    if (!sj.is_object()) return Status::Invalid("protocol schema: " + sname + " is not an object");
    Service s;
    s.error = sj.value("error", ordered_json::object());
    if (auto st = CheckSpecs(s.error, sname + ".error"); !st.ok()) return st;
    for (const char* group : {"ops", "events"}) {
      const ordered_json messages =
          sj.value(group, ordered_json::object());  // items() refers to it
      for (const auto& [name, mj] : messages.items()) {
        const std::string where = sname + "." + group + "." + name;
        if (!mj.is_object())
          return Status::Invalid("protocol schema: " + where + " is not an object");
        Message m;
        m.request = mj.value("request", ordered_json());
        m.reply = mj.value("reply", ordered_json());
        m.failure = mj.value("failure", ordered_json());
        if (auto st = CheckSpecs(m.request, where + ".request"); !st.ok()) return st;
        for (const ordered_json* f : {&m.reply, &m.failure}) {
          if (f->is_null()) continue;
          if (auto st = CheckSpecs(*f, where); !st.ok()) return st;
        }
        (std::string(group) == "ops" ? s.ops : s.events).emplace(name, std::move(m));
      }
    }
    schema.services_.emplace(sname, std::move(s));
  }
  return schema;
}

std::vector<std::string> Schema::Ops(std::string_view service) const {
  std::vector<std::string> out;
  if (const Service* s = Find(service))
    for (const auto& [name, m] : s->ops) out.push_back(name);
  return out;
}

const Schema::Service* Schema::Find(std::string_view service) const {
  auto it = services_.find(service);
  return it == services_.end() ? nullptr : &it->second;
}

Status Schema::CheckRequest(std::string_view service, const json& msg) const {
  const std::string svc(service);
  const Service* s = Find(service);
  if (!s) return Status::Invalid("protocol: no service '" + svc + "'");
  if (!msg.is_object() || !msg.contains("op") || !msg["op"].is_string())
    return Status::Invalid(svc + " request: missing required field 'op'");
  const std::string& op = msg["op"].get_ref<const std::string&>();
  auto it = s->ops.find(op);
  if (it == s->ops.end()) return Status::Invalid(svc + " request: unknown op '" + op + "'");
  const std::string what = svc + " '" + op + "' request";
  if (op == "hello" && msg.value("protocol", json()) != json(version_)) {
    return Status::Invalid(what + ": field 'protocol' must be this schema's version " +
                           std::to_string(version_));
  }
  return CheckFields(it->second.request, msg, what, {"op"});
}

Status Schema::CheckAnswer(const Service& s, const Message& m, const std::string& what,
                           const json& reply) const {
  if (m.reply.is_null()) return Status::Invalid(what + ": this message is not answered");
  if (!reply.is_object() || !reply.contains("ok") || !reply["ok"].is_boolean())
    return Status::Invalid(what + ": missing required field 'ok'");
  const ordered_json& fields = reply["ok"].get<bool>() ? m.reply
                               : m.failure.is_null()   ? s.error
                                                       : m.failure;
  return CheckFields(fields, reply, what, {"ok"});
}

Status Schema::CheckReply(std::string_view service, std::string_view op, const json& reply) const {
  const std::string svc(service), name(op);
  const Service* s = Find(service);
  if (!s) return Status::Invalid("protocol: no service '" + svc + "'");
  auto it = s->ops.find(op);
  if (it == s->ops.end()) return Status::Invalid(svc + " reply: unknown op '" + name + "'");
  return CheckAnswer(*s, it->second, svc + " '" + name + "' reply", reply);
}

Status Schema::CheckReplyTo(std::string_view service, const json& request,
                            const json& reply) const {
  const json op = request.is_object() ? request.value("op", json()) : json();
  if (!op.is_string()) return Status::Invalid(std::string(service) + " reply: to no op");
  // An older or newer runner: say so, rather than name a field it lacks.
  if (op == "hello" && reply.is_object() && reply.value("ok", json()) == json(true)) {
    if (auto s = CheckVersion(service, reply); !s.ok()) return s;
  }
  return CheckReply(service, op.get<std::string>(), reply);
}

Status Schema::CheckEvent(std::string_view service, const json& msg) const {
  const std::string svc(service);
  const Service* s = Find(service);
  if (!s) return Status::Invalid("protocol: no service '" + svc + "'");
  if (!msg.is_object() || !msg.contains("event") || !msg["event"].is_string())
    return Status::Invalid(svc + " event: missing required field 'event'");
  const std::string& event = msg["event"].get_ref<const std::string&>();
  auto it = s->events.find(event);
  if (it == s->events.end()) return Status::Invalid(svc + " event: unknown event '" + event + "'");
  return CheckFields(it->second.request, msg, svc + " '" + event + "' event", {"event"});
}

Status Schema::CheckEventReply(std::string_view service, std::string_view event,
                               const json& reply) const {
  const std::string svc(service), name(event);
  const Service* s = Find(service);
  if (!s) return Status::Invalid("protocol: no service '" + svc + "'");
  auto it = s->events.find(event);
  if (it == s->events.end()) return Status::Invalid(svc + " event: unknown event '" + name + "'");
  return CheckAnswer(*s, it->second, svc + " '" + name + "' event reply", reply);
}

Status Schema::CheckVersion(std::string_view service, const json& hello_reply) const {
  const json theirs = hello_reply.is_object() ? hello_reply.value("protocol", json()) : json();
  if (theirs == json(version_)) return Status::Ok();
  return Status::Invalid(
      "protocol version mismatch: kforge speaks " + std::to_string(version_) + ", its " +
      std::string(service) + " speaks " +
      (theirs.is_null() ? std::string("none (a runner older than version 1)") : theirs.dump()) +
      ": run kforge with the runner of its own checkout (KFORGE_RUNNER_DIR)");
}

std::string_view EmbeddedText() { return kProtocolJson; }

const Schema& Embedded() {
  static const Schema* schema = [] {
    auto s = Schema::Parse(kProtocolJson);
    // The file is checked when kforge is built (protocol_test.cc); a broken one is a build bug.
    if (!s.ok()) {
      fprintf(stderr, "kforge: the compiled-in runner/protocol.json is invalid: %s\n",
              s.status().message().c_str());
      abort();
    }
    return new Schema(std::move(s.value()));
  }();
  return *schema;
}

}  // namespace kf::protocol
