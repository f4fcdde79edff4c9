"""The Python side of kforge: thin glue between the C++ supervisor and PyTorch.

Processes (each started by the supervisor, talking JSON lines on an inherited socket):
  build_worker  compiles load_inline calls with torch's own builder, one forked child per build
  judge         trusted: loads problems, draws inputs, computes and keeps reference outputs,
                compares, times baselines (its parts: problem, slots, check, timing)
  zygote        has imported torch (never CUDA); forks one candidate host per candidate
  candidate     untrusted code runs here: imports the candidate, calls it, times it
"""
