// memory: how much of the device the judge's trial sets may take (docs/PROTOCOL.md, "Memory").
// Pure decisions over the facts the judge reports when it loads a problem.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace kf::execute {

struct MemoryFacts {
  int64_t input_bytes = 0;   // one draw of get_inputs()
  int64_t output_bytes = 0;  // the reference's outputs for it
  // What the judge could still use after loading the problem (its cached blocks count as free;
  // it hands them back before a candidate runs). 0: unknown (the CPU without a budget).
  int64_t free_bytes = 0;
  // The memory the judge plans with: the device's, or the budget. 0: unknown.
  int64_t plan_bytes = 0;
};

MemoryFacts MemoryFactsFromJson(const nlohmann::json& j);

// Input sets in the timing rotation: the requested number while they fit, fewer for big
// problems, never less than one. Each set costs the judge its input and output buffers, and the
// candidate a pristine copy of the inputs (fresh inputs are rewritten from it before every timed
// call) and the set's last output (checked after timing); together the sets may take a third of
// the free memory, leaving the rest to the candidate's own outputs and work space and to the
// judge's checks. (Half was too much on the H200: KernelBench's 7 GiB InstanceNorm ran the
// candidate out of memory with two sets.)
int FitTimingPool(int requested, const MemoryFacts& m);

// Whether a run hands back each phase's trial buffers before the next phase's are made (the
// correctness slot before a shape variant's and before the timing rotation, the rotation
// before the ablation call), the candidate host letting go of them first. True for a big
// problem: one whose trial set (inputs and outputs) takes more than 1/64 of the memory the
// judge plans with, the same share over which the judge keeps no copies beside a slot
// (runner/kforge_runner/slots.py, KEEP_SHARE). Otherwise the judge keeps every slot from one
// candidate to the next, as before: making them again costs time and saves nothing that matters.
bool ReleaseBetweenPhases(const MemoryFacts& m);

}  // namespace kf::execute
