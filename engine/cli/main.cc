// Entry point of the onemodel tool: command dispatch and the one place errors become exit statuses.
// Exit 0 on success, 1 on an engine error ("error: <Kind>: <message>" on stderr), 2 on a usage error
// (the message and the usage text on stderr).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "onemodel/onemodel.h"

namespace {

constexpr const char* kUsage =
    "usage:\n"
    "  onemodel info MODEL\n"
    "      inputs, outputs, opsets, operator inventory, missing operators, exact-mode availability\n"
    "  onemodel run MODEL [--input NAME=FILE.npy]... [--mode fast|exact] [--threads N] [--optimization LEVEL]\n"
    "               [--weight-storage float32|float16|bfloat16] [--save-outputs DIR]\n"
    "      runs once; inputs not given get deterministic random values (symbolic dims = 1);\n"
    "      prints each output's shape, first values and SHA-256; --save-outputs writes DIR/<output>.npy\n"
    "  onemodel bench MODEL [--input NAME=FILE.npy]... [--dim NAME=VALUE]... [--mode fast|exact] [--threads N]\n"
    "                [--optimization LEVEL] [--weight-storage float32|float16|bfloat16] [--seconds S]\n"
    "                [--reps N] [--save-outputs DIR] [--profile] [--profile-top N]\n"
    "      times load, a cold call and N (3) repetitions of ~S (1) seconds after a warm-up; prints one line\n"
    "      load_ms=.. first_ms=.. median_ms=.. min_ms=.. max_ms=.. (symbolic dims of random inputs need --dim);\n"
    "      --profile then runs one more repetition timing every node and prints the time per operator type\n"
    "      and per node, sorted, with each one's share of the run (--profile-top N rows of nodes, 0 = all)\n"
    "      --weight-storage float16|bfloat16 (run, bench): the large weights of MatMul, Gemm and Conv kept\n"
    "      rounded to 16 bits and widened for each use (docs/fp16.md section 6)\n"
    "  onemodel convert MODEL OUTPUT [--weight-storage float32|float16|bfloat16]\n"
    "      writes MODEL (ONNX) in the OneModel format (docs/format.md): the same graph, weights aligned for\n"
    "      memory mapping; every command above loads either format; float16 / bfloat16: the weights\n"
    "      --weight-storage compacts in a session stored rounded to 16 bits (about half the file)\n"
    "  LEVEL is none, basic or all (default): the graph passes fast mode runs (docs/architecture.md)\n"
    "  onemodel help | --help\n"
    "  onemodel --version\n";

int engine_error(const onemodel::Error& e) {
  std::string text = e.what();
  // The runtime lists missing operators in operators(); show them unless the message already does.
  if (!e.operators().empty() && text.find(e.operators().front()) == std::string::npos) {
    text += " (operators:";
    for (size_t i = 0; i < e.operators().size(); ++i) text += (i ? ", " : " ") + e.operators()[i];
    text += ")";
  }
  std::fprintf(stderr, "error: %s\n", text.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  // Whatever was printed before an error goes out first, so the error line ends the combined output.
  struct FlushFirst {
    ~FlushFirst() { std::fflush(stdout); }
  };
  try {
    FlushFirst flush_on_exit_from_try;
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (cmd == "--version" || cmd == "version") {
      std::printf("onemodel %s\n", onemodel::version());
      return 0;
    }
    if (cmd == "info") return onemodel::cli::cmd_info(rest);
    if (cmd == "run") return onemodel::cli::cmd_run(rest);
    if (cmd == "bench") return onemodel::cli::cmd_bench(rest);
    if (cmd == "convert") return onemodel::cli::cmd_convert(rest);
    throw onemodel::cli::UsageError("unknown command '" + cmd + "'");
  } catch (const onemodel::cli::UsageError& e) {
    std::fprintf(stderr, "onemodel: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const onemodel::Error& e) {
    return engine_error(e);
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "error: Io: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: Unsupported: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: Internal: %s\n", e.what());
    return 1;
  }
}
