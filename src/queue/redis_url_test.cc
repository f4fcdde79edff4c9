#include "queue/redis_url.h"

#include <gtest/gtest.h>

namespace kf::queue {
namespace {

RedisAddress Parse(const std::string& url) {
  auto a = ParseRedisUrl(url);
  EXPECT_TRUE(a.ok()) << url << ": " << a.status().message();
  return a.ok() ? *a : RedisAddress{};
}

TEST(RedisUrl, HostPortAndDatabase) {
  RedisAddress a = Parse("redis://10.0.0.5:7000/2");
  EXPECT_EQ(a.host, "10.0.0.5");
  EXPECT_EQ(a.port, 7000);
  EXPECT_EQ(a.db, 2);
  EXPECT_FALSE(a.tls.enabled);
  EXPECT_TRUE(a.password.empty());
  RedisAddress bare = Parse("localhost");
  EXPECT_EQ(bare.host, "localhost");
  EXPECT_EQ(bare.port, 6379);
  EXPECT_EQ(Parse("cache.internal:6380").port, 6380);
  RedisAddress v6 = Parse("redis://[::1]:6390/3");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 6390);
  EXPECT_EQ(v6.db, 3);
  EXPECT_EQ(Parse("redis://h/").db, 0);
}

TEST(RedisUrl, PasswordsAndAclUsersAsRedisCliReadsThem) {
  RedisAddress colon = Parse("redis://:secret@host");  // the form the issue saw misread
  EXPECT_EQ(colon.host, "host");
  EXPECT_EQ(colon.password, "secret");
  EXPECT_TRUE(colon.user.empty());
  RedisAddress alone = Parse("redis://secret@host:6380");  // redis-cli: a password alone
  EXPECT_EQ(alone.password, "secret");
  EXPECT_TRUE(alone.user.empty());
  EXPECT_EQ(alone.port, 6380);
  RedisAddress acl = Parse("redis://kforge:pa%3Ass%2Fw%40rd@host/1");
  EXPECT_EQ(acl.user, "kforge");
  EXPECT_EQ(acl.password, "pa:ss/w@rd");
  EXPECT_EQ(acl.db, 1);
  // An unencoded '@' in a password still works: the user-info ends at the last '@'.
  EXPECT_EQ(Parse("redis://u:p@ss@host").password, "p@ss");
  EXPECT_EQ(Parse("redis://u:p@ss@host").host, "host");
}

TEST(RedisUrl, TlsAndItsOptions) {
  RedisAddress a = Parse("rediss://host:6380?ca=/etc/kf/ca.pem&cert=/c.pem&key=/k.pem");
  EXPECT_TRUE(a.tls.enabled);
  EXPECT_TRUE(a.tls.verify);
  EXPECT_EQ(a.tls.ca_file, "/etc/kf/ca.pem");
  EXPECT_EQ(a.tls.cert_file, "/c.pem");
  EXPECT_EQ(a.tls.key_file, "/k.pem");
  RedisAddress b = Parse("rediss://:pw@10.1.1.1/4?server_name=redis.internal&verify=none");
  EXPECT_EQ(b.db, 4);
  EXPECT_EQ(b.tls.server_name, "redis.internal");
  EXPECT_FALSE(b.tls.verify);
  EXPECT_EQ(b.password, "pw");
  EXPECT_EQ(Parse("rediss://h?ca=%2Fa%20b%2Fca.pem").tls.ca_file, "/a b/ca.pem");
}

TEST(RedisUrl, BadUrlsAreRefusedWithTheReason) {
  auto msg = [](const std::string& url) { return ParseRedisUrl(url).status().message(); };
  EXPECT_NE(msg("redis://h:notaport").find("port 'notaport'"), std::string::npos);
  EXPECT_NE(msg("").find("no host"), std::string::npos);
  EXPECT_NE(msg("http://h").find("redis:// or rediss://"), std::string::npos);
  EXPECT_NE(msg("redis://h?ca=/x").find("rediss://"), std::string::npos);
  EXPECT_NE(msg("rediss://h?verify=maybe").find("full or none"), std::string::npos);
  EXPECT_NE(msg("rediss://h?color=red").find("unknown option 'color'"), std::string::npos);
  EXPECT_NE(msg("rediss://h?ca=").find("needs a value"), std::string::npos);
  EXPECT_NE(msg("redis://h/x").find("database 'x'"), std::string::npos);
  EXPECT_FALSE(ParseRedisUrl("redis://h:0").ok());
  EXPECT_FALSE(ParseRedisUrl("redis://h:70000").ok());
  EXPECT_FALSE(ParseRedisUrl("redis://[::1").ok());
  EXPECT_FALSE(ParseRedisUrl("redis://:bad%zzescape@h").ok());
}

TEST(RedisUrl, NoErrorEverShowsThePassword) {
  // Malformed on purpose: an unencoded '/', '?' or '#' cuts the URL inside the password, so
  // the parser sees pieces of it as host, port, database or option.
  for (const std::string url :
       {"redis://:hunter2/x@host", "redis://u:hunter2?x@host", "redis://:hun#ter2@host",
        "redis://:hunter2@host:notaport", "redis://:hunter2@host/db", "redis://:hunter2@[::1",
        "rediss://:hun?verify=ter2@h", "redis://:hun?ca=ter2@h", "rediss://:hun?x=ter2@h",
        "redis://:h%zzunter2@h", "ftp://:hunter2@h", "redis://u:hun/?ter2@h:1"}) {
    auto a = ParseRedisUrl(url);
    ASSERT_FALSE(a.ok()) << url;
    EXPECT_EQ(a.status().message().find("hunter"), std::string::npos) << a.status().message();
    EXPECT_EQ(a.status().message().find("ter2"), std::string::npos) << a.status().message();
  }
}

TEST(RedisUrl, RedactKeepsTheUserAndHidesThePassword) {
  EXPECT_EQ(RedactRedisUrl("redis://:secret@host:1/2"), "redis://:***@host:1/2");
  EXPECT_EQ(RedactRedisUrl("redis://secret@host"), "redis://:***@host");
  EXPECT_EQ(RedactRedisUrl("rediss://kf:secret@h?ca=/x"), "rediss://kf:***@h?ca=/x");
  EXPECT_EQ(RedactRedisUrl("redis://u:p@ss@host"), "redis://u:***@host");
  EXPECT_EQ(RedactRedisUrl("redis://:pa/ss@host"), "redis://:***@host");
  EXPECT_EQ(RedactRedisUrl("redis://host:6379"), "redis://host:6379");
  EXPECT_EQ(RedactRedisUrl("u:pw@host"), "u:***@host");
}

TEST(RedisUrl, DescribeNeverShowsThePassword) {
  RedisAddress a = Parse("rediss://kf:secret@[::1]:6390/2?ca=/ca.pem&verify=none");
  EXPECT_EQ(DescribeRedis(a), "rediss://kf:***@[::1]:6390/2?ca=/ca.pem&verify=none");
  EXPECT_EQ(DescribeRedis(Parse("redis://h")), "redis://h:6379");
  EXPECT_EQ(DescribeRedis(Parse("redis://:pw@h")), "redis://:***@h:6379");
}

TEST(RedisUrl, PasswordFromTheEnvironment) {
  RedisAddress a = Parse("redis://kforge@h");   // names the user... as redis-cli: a password
  RedisAddress b = Parse("redis://kforge:@h");  // the ACL user, password to come
  EXPECT_EQ(b.user, "kforge");
  EXPECT_TRUE(b.password.empty());
  ASSERT_TRUE(SetRedisPasswordFromEnv("KF_PW", "from-env", &b).ok());
  EXPECT_EQ(b.password, "from-env");
  EXPECT_FALSE(SetRedisPasswordFromEnv("KF_PW", "x", &a).ok());  // given twice
  RedisAddress c;
  auto unset = SetRedisPasswordFromEnv("KF_PW", nullptr, &c);
  EXPECT_FALSE(unset.ok());
  EXPECT_NE(unset.message().find("KF_PW"), std::string::npos);
  EXPECT_FALSE(SetRedisPasswordFromEnv("KF_PW", "", &c).ok());
}

}  // namespace
}  // namespace kf::queue
