// CheckArguments: the few JSON Schema keywords our tools declare, so a handler only ever sees
// arguments of the types it declared (and a model that sent others is told which and why).
#include <cmath>
#include <sstream>

#include "mcp/mcp.h"

namespace kf::mcp {
using nlohmann::json;

namespace {

const char* TypeName(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

bool HasType(const json& v, const std::string& type) {
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "null") return v.is_null();
  if (type == "number") return v.is_number();
  if (type == "integer") {  // JSON Schema: any number without a fractional part
    if (v.is_number_integer() || v.is_number_unsigned()) return true;
    return v.is_number_float() && std::isfinite(v.get<double>()) &&
           v.get<double>() == std::floor(v.get<double>());
  }
  return true;  // a type we do not check
}

std::string Number(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

std::string CheckOne(const std::string& name, const json& prop, const json& v) {
  if (!prop.is_object()) return "";
  if (prop.contains("type")) {
    json types = prop["type"].is_array() ? prop["type"] : json::array({prop["type"]});
    bool any = false;
    std::string wanted;
    for (const auto& t : types) {
      if (!t.is_string()) continue;
      any = any || HasType(v, t.get<std::string>());
      wanted += (wanted.empty() ? "" : " or ") + t.get<std::string>();
    }
    if (!any && !wanted.empty()) {
      bool vowel = std::string("aeiou").find(wanted[0]) != std::string::npos;
      return "argument '" + name + "' must be " + (vowel ? "an " : "a ") + wanted + " (got " +
             TypeName(v) + ")";
    }
  }
  if (v.is_number()) {
    double x = v.get<double>();
    if (prop.contains("minimum") && prop["minimum"].is_number() &&
        x < prop["minimum"].get<double>())
      return "argument '" + name + "' must be at least " + Number(prop["minimum"]) + " (got " +
             Number(x) + ")";
    if (prop.contains("maximum") && prop["maximum"].is_number() &&
        x > prop["maximum"].get<double>())
      return "argument '" + name + "' must be at most " + Number(prop["maximum"]) + " (got " +
             Number(x) + ")";
  }
  return "";
}

}  // namespace

std::string CheckArguments(const json& schema, const json& arguments) {
  if (!arguments.is_object()) return "the arguments must be an object";
  const json props = schema.value("properties", json::object());
  for (const auto& r : schema.value("required", json::array())) {
    if (r.is_string() && !arguments.contains(r.get<std::string>())) {
      return "argument '" + r.get<std::string>() + "' is required";
    }
  }
  for (const auto& [name, v] : arguments.items()) {
    if (!props.contains(name)) {
      if (schema.value("additionalProperties", json(true)) == false) {
        std::string known;
        for (const auto& [p, _] : props.items()) known += (known.empty() ? "" : ", ") + p;
        return "unknown argument '" + name + "' (arguments: " + known + ")";
      }
      continue;
    }
    if (std::string why = CheckOne(name, props[name], v); !why.empty()) return why;
  }
  return "";
}

}  // namespace kf::mcp
