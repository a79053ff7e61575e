// What Session::end_profiling returns: where the runs between start_profiling and end_profiling spent their
// time, per node and per operator type (docs/profiling.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace onemodel {

struct NodeProfile {
  // The node's name; a node of a control-flow body is named by its path, "If_12/then_branch/LSTM_3".
  std::string node;
  std::string op_type;
  int depth = 0;  // 0 for nodes of the model's graph, 1 inside a body, ...
  int64_t calls = 0;
  double total_ms = 0;  // wall time of the node's steps, nested bodies included
  double self_ms = 0;   // total_ms less the nodes of its own bodies
  double share = 0;     // self_ms / Profile::run_ms
};

struct OpTypeProfile {
  std::string op_type;
  int64_t calls = 0;
  double self_ms = 0;  // sum of the self times of its nodes (so types add up without double counting)
  double share = 0;
};

struct Profile {
  int64_t runs = 0;
  double run_ms = 0;               // wall time of the profiled runs, from their start to their outputs copied out
  double nodes_ms = 0;             // sum of the self times of every node
  double overhead_ms = 0;          // run_ms - nodes_ms: input checks, plan lookup, state lease, copies, step dispatch
  std::vector<NodeProfile> nodes;  // by self_ms, largest first
  std::vector<OpTypeProfile> op_types;  // by self_ms, largest first

  // The two tables as text, `top` rows of nodes (0: all), times per run.
  std::string to_text(int top = 25) const;
};

}  // namespace onemodel
