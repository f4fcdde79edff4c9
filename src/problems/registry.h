// problems: what a problem file is, and the problems an operator registers at start-up, known
// by id. The one home of both: `kforge bench` discovers problem files with DefinesModel, and
// `kforge serve` and `kforge mcp` take problems only through a Registry (a request names an id;
// it never makes the service load a file of its choosing).
//
// Thread-safety: a Registry is filled before it is shared, then read-only (any number of threads).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kf::problems {

// True when `source` defines the reference model: a line that starts with `class Model(` or
// `class Model:`. A candidate's `class ModelNew` is not one, nor is an indented class.
bool DefinesModel(std::string_view source);

// A problem file found under a folder (ProblemFiles), with the text it was judged a problem by.
struct FoundProblem {
  std::filesystem::path path;
  std::string text;
};

// The problem files under `dir`, recursively: every *.py that DefinesModel, sorted by path (the
// one walk of a problem folder: the registry, `kforge synth --against`, `kforge lint-problems`).
// Each is read once, here. IoError when the folder cannot be listed; an empty list when it holds
// no problem.
Result<std::vector<FoundProblem>> ProblemFiles(const std::filesystem::path& dir);

struct Problem {
  std::string id;                   // "level1/relu"
  std::filesystem::path path;       // absolute, as registered
  std::filesystem::path canonical;  // path with symlinks and ".." resolved
  std::string text;                 // read once, at registration: what every job evaluates
  std::string hash;                 // SHA-256 of text
};

class Registry {
 public:
  // Registers every *.py under `dir` (recursively) that DefinesModel, by its path relative to
  // `dir` without ".py" ("level1/relu" for DIR/level1/relu.py), and also by eval::ProblemId of
  // its path when that differs and is free. Ids are queue::ValidProblemId (files with other
  // names are skipped). Fails if `dir` is not a folder or holds no problem.
  Status AddFolder(const std::filesystem::path& dir);

  // By id or alias; nullptr when none.
  const Problem* Find(const std::string& id) const;
  // The registered problem whose file `path` names once both are resolved (realpath: relative
  // to the working folder, symlinks and ".." followed); nullptr for any other file, or none.
  const Problem* FindFile(const std::filesystem::path& path) const;
  // Find, else FindFile: what a client's `problem` argument means.
  const Problem* Resolve(const std::string& id_or_path) const;

  std::vector<const Problem*> List() const;  // each problem once, by id
  size_t size() const { return by_path_.size(); }

 private:
  std::map<std::string, Problem> by_path_;  // canonical path -> problem
  std::map<std::string, std::string> ids_;  // id (and alias) -> canonical path
};

}  // namespace kf::problems
