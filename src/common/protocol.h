// The messages kforge exchanges with its Python runner (judge, zygote, candidate host, build
// worker), checked against runner/protocol.json: the one definition of every request and reply,
// which the runner reads at run time and kforge compiles in (cmake/embed_protocol.cmake), so both
// sides check against the same file. docs/ARCHITECTURE.md, "The runner protocol".
//
// A failed check is kInvalidArgument with a message that names the service, the op and the
// field ("judge 'prepare' request: field 'seed' must be integer, not string"). Thread-safe: a
// Schema is immutable once parsed.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kf::protocol {

class Schema {
 public:
  // Parses a schema in protocol.json's format; kInvalidArgument if it is not one.
  static Result<Schema> Parse(std::string_view text);

  int version() const { return version_; }
  // The ops `service` accepts ("judge", "zygote", "candidate", "build_worker"), sorted.
  std::vector<std::string> Ops(std::string_view service) const;

  // A request kforge sends: a known op with exactly its fields (hello must carry this
  // schema's version).
  Status CheckRequest(std::string_view service, const nlohmann::json& msg) const;
  // The reply to `op`: {"ok": true} with the op's reply fields, or {"ok": false} with its
  // failure fields (the service's error fields unless the op has its own).
  Status CheckReply(std::string_view service, std::string_view op,
                    const nlohmann::json& reply) const;
  // The reply to `request` (a request CheckRequest accepts): CheckVersion first for hello,
  // then CheckReply.
  Status CheckReplyTo(std::string_view service, const nlohmann::json& request,
                      const nlohmann::json& reply) const;
  // An event the runner sends while answering an op ({"event": name, ...}), and kforge's
  // answer to it.
  Status CheckEvent(std::string_view service, const nlohmann::json& msg) const;
  Status CheckEventReply(std::string_view service, std::string_view event,
                         const nlohmann::json& reply) const;
  // A hello reply's protocol version against this schema's: a clear error when the runner
  // speaks another version (or none: a runner older than the versioned protocol).
  Status CheckVersion(std::string_view service, const nlohmann::json& hello_reply) const;

 private:
  // In the file's order, so a message's first bad field is the same one the runner names.
  struct Message {
    nlohmann::ordered_json request;  // field -> type spec
    nlohmann::ordered_json reply;    // null: not answered
    nlohmann::ordered_json failure;  // null: the service's error fields
  };
  struct Service {
    nlohmann::ordered_json error;
    std::map<std::string, Message, std::less<>> ops, events;
  };
  const Service* Find(std::string_view service) const;
  Status CheckAnswer(const Service& s, const Message& m, const std::string& what,
                     const nlohmann::json& reply) const;

  int version_ = 0;
  std::map<std::string, Service, std::less<>> services_;
};

// runner/protocol.json as compiled into this binary.
const Schema& Embedded();
// Its text (for the tests that compare it with the runner's file).
std::string_view EmbeddedText();

// Whether `fields` ({"name": "type spec"}) describes `msg` exactly, besides the names in
// `skip`: kInvalidArgument naming `what` and the field otherwise (the first bad one in the
// order of `fields`).
Status CheckFields(const nlohmann::ordered_json& fields, const nlohmann::json& msg,
                   const std::string& what, std::initializer_list<std::string_view> skip);

}  // namespace kf::protocol
