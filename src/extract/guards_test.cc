#include "extract/guards.h"

#include <gtest/gtest.h>

#include <string>

namespace kf::extract {
namespace {

std::string Summary(std::string_view code) {
  std::string s;
  for (const GuardBlock& g : FallbackGuards(code)) {
    if (!s.empty()) s += " ";
    s += (g.is_finally ? "finally:" : "except:") + std::to_string(g.header_line) + "-" +
         std::to_string(g.last_line);
  }
  return s;
}

TEST(FallbackGuards, ExceptAndFinallyBodies) {
  EXPECT_EQ(Summary("try:\n"
                    "    ext = build()\n"
                    "except Exception as e:\n"
                    "    ext = None\n"
                    "    note = str(e)\n"
                    "\n"
                    "x = 1\n"),
            "except:3-5");
  EXPECT_EQ(Summary("def f(x):\n"
                    "    try:\n"
                    "        return g(x)\n"
                    "    except (ValueError,\n"
                    "            RuntimeError):\n"
                    "        return h(x)\n"
                    "    finally:\n"
                    "        done()\n"
                    "    return 0\n"),
            "except:4-6 finally:7-8");
}

TEST(FallbackGuards, OneLineNestedAndNone) {
  EXPECT_EQ(Summary("try: y = f()\nexcept E: y = g()\n"), "except:2-2");
  EXPECT_EQ(Summary("try:\n  a()\nexcept A:\n  try:\n    b()\n  except B:\n    c()\n"),
            "except:3-7 except:6-7");
  // `except` in a string or as an attribute is not a block.
  EXPECT_EQ(Summary("s = 'except'\nx = a.finally_\n"), "");
  EXPECT_EQ(Summary("def broken(:\n"), "");
}

}  // namespace
}  // namespace kf::extract
