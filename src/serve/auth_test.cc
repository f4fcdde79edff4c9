#include "serve/auth.h"

#include <gtest/gtest.h>

namespace kf::serve {
namespace {

TEST(BearerCheck, OnlyTheExactTokenPasses) {
  BearerCheck c("s3cret-token-0123456789");
  EXPECT_TRUE(c.enabled());
  EXPECT_TRUE(c.Allows("Bearer s3cret-token-0123456789"));
  EXPECT_TRUE(c.Allows("bearer   s3cret-token-0123456789"));  // scheme case, spaces
  EXPECT_FALSE(c.Allows("Bearer s3cret-token-012345678"));    // a prefix
  EXPECT_FALSE(c.Allows("Bearer s3cret-token-01234567890"));  // longer
  EXPECT_FALSE(c.Allows("Bearer S3CRET-TOKEN-0123456789"));
  EXPECT_FALSE(c.Allows("s3cret-token-0123456789"));
  EXPECT_FALSE(c.Allows("Basic s3cret-token-0123456789"));
  EXPECT_FALSE(c.Allows("Bearers3cret-token-0123456789"));
  EXPECT_FALSE(c.Allows(""));
  EXPECT_FALSE(c.Allows("Bearer "));
  BearerCheck none;
  EXPECT_FALSE(none.enabled());
  EXPECT_TRUE(none.Allows(""));
}

TEST(BearerCheck, TokensMustBeLongAndPlain) {
  EXPECT_TRUE(ValidToken("0123456789abcdef").ok());
  EXPECT_FALSE(ValidToken("short").ok());
  EXPECT_FALSE(ValidToken("0123456789 abcdef").ok());
  EXPECT_FALSE(ValidToken("0123456789abcdef\n").ok());
}

TEST(Loopback, AddressesAndNames) {
  for (const char* h : {"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "localhost"}) {
    EXPECT_TRUE(IsLoopbackHost(h)) << h;
  }
  for (const char* h : {"0.0.0.0", "::", "10.0.0.1", "192.168.1.1", "::ffff:10.0.0.1", ""}) {
    EXPECT_FALSE(IsLoopbackHost(h)) << h;
  }
}

}  // namespace
}  // namespace kf::serve
