// Content hashing (SHA-256 through OpenSSL's libcrypto): job, artifact and problem identity.
#pragma once

#include <string>
#include <string_view>

namespace kf {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// The value of one hex digit (either case); -1 when `c` is none.
int HexDigit(char c);

}  // namespace kf
