// Prefix beam search, ctc.md sections 3-4, in double precision with the functions of section 5.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "decode/ctc_common.h"
#include "decode/ctc_math.h"
#include "onemodel/ctc.h"

namespace onemodel::ctc {
namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr const char* kWhat = "ctc beam_search";

// ctc.md section 1: width and top N.
void check_options(const BeamOptions& o) {
  if (o.beam_width < 1 || o.beam_width > kMaxBeamWidth) {
    throw Error(ErrorKind::InvalidArgument, std::string(kWhat) + ": beam width " + std::to_string(o.beam_width) +
                                                " is not in [1, " + std::to_string(kMaxBeamWidth) + "]");
  }
  if (o.top_n < 1 || o.top_n > o.beam_width) {
    throw Error(ErrorKind::InvalidArgument, std::string(kWhat) + ": top N " + std::to_string(o.top_n) +
                                                " is not in [1, beam width " + std::to_string(o.beam_width) + "]");
  }
}

// ctc.md section 1: steps * beam_width * (classes - 1) + 1 <= 2^24, checked without overflow.
void check_limit(const BeamOptions& o, int64_t steps, int64_t classes) {
  const int64_t labels = classes - 1;
  if (steps > 0 && labels > 0 &&
      (steps > (kMaxPrefixes - 1) / o.beam_width || steps * o.beam_width > (kMaxPrefixes - 1) / labels)) {
    throw Error(ErrorKind::Unsupported, std::string(kWhat) + ": " + std::to_string(steps) + " steps x beam width " +
                                            std::to_string(o.beam_width) + " x " + std::to_string(labels) +
                                            " labels may create more than 2^24 prefixes; use a narrower beam");
  }
}

// NaN and +inf anywhere, and logit rows without a finite maximum, are refused (ctc.md section 1).
void check_values(std::span<const float> scores, int64_t steps, int64_t classes, Scores kind, int64_t b) {
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = scores.data() + t * classes;
    bool any_above_neg_inf = false;
    for (int64_t j = 0; j < classes; ++j) {
      const float v = row[j];
      if (v != v || v == std::numeric_limits<float>::infinity()) {
        throw Error(ErrorKind::InvalidInput,
                    std::string(kWhat) + ": " + detail::element_name(b, t, j) + " is " + (v != v ? "NaN" : "+inf"));
      }
      any_above_neg_inf = any_above_neg_inf || v > -std::numeric_limits<float>::infinity();
    }
    if (kind == Scores::Logits && !any_above_neg_inf && classes > 0) {
      throw Error(ErrorKind::InvalidInput, std::string(kWhat) + ": every logit of step " + std::to_string(t) +
                                               (b >= 0 ? " of item " + std::to_string(b) : "") + " is -inf");
    }
  }
}

// lp(j) of one step (ctc.md section 4).
void log_probabilities(const float* row, int64_t classes, Scores kind, std::vector<double>& lp) {
  if (kind == Scores::LogProbabilities) {
    for (int64_t j = 0; j < classes; ++j) lp[static_cast<size_t>(j)] = static_cast<double>(row[j]);
    return;
  }
  float m = row[0];
  for (int64_t j = 1; j < classes; ++j) m = row[j] > m ? row[j] : m;
  const double md = static_cast<double>(m);
  double s = 0.0;
  for (int64_t j = 0; j < classes; ++j) s = s + det_exp(static_cast<double>(row[j]) - md);
  const double ln_s = det_ln(s);
  for (int64_t j = 0; j < classes; ++j) lp[static_cast<size_t>(j)] = (static_cast<double>(row[j]) - md) - ln_s;
}

// The prefix tree: node 0 is the empty prefix; a node's id is its creation order (ctc.md section 3). Only
// nodes that were in a beam have children; theirs are kept sorted by label, so extending a prefix by every
// class is one merge walk instead of a lookup per class (recognisers have thousands of classes).
struct Node {
  int32_t parent;
  int32_t label;
  int32_t kids = -1;  // index into Tree::kids_, -1 until the node is first extended
};
struct Child {
  int32_t label, node;
};

struct Entry {
  int32_t node;
  double pb, pnb, score;
};

class Tree {
 public:
  Tree() { nodes_.push_back(Node{-1, -1}); }

  int32_t label(int32_t node) const { return nodes_[static_cast<size_t>(node)].label; }

  // Starts extending `parent`: children are then asked for in increasing label order through child().
  void begin_extend(int32_t parent) {
    Node& p = nodes_[static_cast<size_t>(parent)];
    if (p.kids < 0) {
      p.kids = static_cast<int32_t>(kids_.size());
      kids_.emplace_back();
    }
    parent_ = parent;
    walk_ = 0;
    merged_.clear();
  }
  // The child of the parent being extended for `label` (greater than the last one asked for), made when absent.
  int32_t child(int32_t label) {
    const std::vector<Child>& old = kids_[static_cast<size_t>(nodes_[static_cast<size_t>(parent_)].kids)];
    while (walk_ < old.size() && old[walk_].label < label) merged_.push_back(old[walk_++]);
    if (walk_ < old.size() && old[walk_].label == label) {
      merged_.push_back(old[walk_++]);
      return merged_.back().node;
    }
    const auto id = static_cast<int32_t>(nodes_.size());
    nodes_.push_back(Node{parent_, label});
    merged_.push_back(Child{label, id});
    return id;
  }
  void end_extend() {
    std::vector<Child>& old = kids_[static_cast<size_t>(nodes_[static_cast<size_t>(parent_)].kids)];
    merged_.insert(merged_.end(), old.begin() + static_cast<std::ptrdiff_t>(walk_), old.end());
    old.swap(merged_);
  }

  // The next step's entry of `node`, made (pb = pnb = -inf) when that step has none yet.
  Entry& slot(int32_t node, std::vector<Entry>& next, int32_t step) {
    const auto k = static_cast<size_t>(node);
    if (k >= slot_.size()) {
      slot_.resize(nodes_.size(), 0);
      stamp_.resize(nodes_.size(), -1);
    }
    if (stamp_[k] != step) {
      stamp_[k] = step;
      slot_[k] = static_cast<int32_t>(next.size());
      next.push_back(Entry{node, kNegInf, kNegInf, kNegInf});
    }
    return next[static_cast<size_t>(slot_[k])];
  }

  std::vector<int64_t> labels_of(int32_t node) const {
    std::vector<int64_t> out;
    for (; node > 0; node = nodes_[static_cast<size_t>(node)].parent) {
      out.push_back(nodes_[static_cast<size_t>(node)].label);
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

 private:
  std::vector<Node> nodes_;
  std::vector<std::vector<Child>> kids_;
  std::vector<int32_t> slot_;   // per node: its index in the next step's list, valid when stamp_ == step
  std::vector<int32_t> stamp_;  // per node: the last step that listed it
  int32_t parent_ = 0;
  size_t walk_ = 0;
  std::vector<Child> merged_;
};

std::vector<Hypothesis> search_one(std::span<const float> scores, int64_t steps, int64_t classes, const BeamOptions& o,
                                   int64_t b) {
  check_values(scores, steps, classes, o.scores, b);
  Tree tree;
  std::vector<Entry> beam{Entry{0, 0.0, kNegInf, 0.0}};
  std::vector<Entry> next;
  std::vector<double> lp(static_cast<size_t>(classes));
  const auto blank = static_cast<size_t>(o.blank);
  const auto width = static_cast<size_t>(o.beam_width);
  for (int64_t t = 0; t < steps; ++t) {
    const auto step = static_cast<int32_t>(t);
    log_probabilities(scores.data() + t * classes, classes, o.scores, lp);
    next.clear();
    for (const Entry& e : beam) {
      const double total = e.score;  // logadd(pb, pnb), computed when the entry was ranked
      const int32_t c = tree.label(e.node);
      {
        Entry& self = tree.slot(e.node, next, step);
        self.pb = det_logadd(self.pb, total + lp[blank]);
        if (c >= 0) self.pnb = det_logadd(self.pnb, e.pnb + lp[static_cast<size_t>(c)]);
      }
      tree.begin_extend(e.node);
      for (int64_t j = 0; j < classes; ++j) {
        if (j == o.blank) continue;
        const double add = (j == c ? e.pb : total) + lp[static_cast<size_t>(j)];
        if (add == kNegInf) continue;  // probability 0: creates nothing
        Entry& ext = tree.slot(tree.child(static_cast<int32_t>(j)), next, step);
        ext.pnb = det_logadd(ext.pnb, add);
      }
      tree.end_extend();
    }
    for (Entry& e : next) e.score = det_logadd(e.pb, e.pnb);
    // Best first, equal scores in creation order. Node ids are distinct, so the order is total and the first
    // `width` of a partial sort are those of a full sort.
    const auto keep = std::min(next.size(), width);
    std::partial_sort(
        next.begin(), next.begin() + static_cast<std::ptrdiff_t>(keep), next.end(),
        [](const Entry& x, const Entry& y) { return x.score > y.score || (x.score == y.score && x.node < y.node); });
    next.resize(keep);
    beam.swap(next);
  }
  std::vector<Hypothesis> out;
  const size_t n = std::min(beam.size(), static_cast<size_t>(o.top_n));
  for (size_t i = 0; i < n; ++i) {
    Hypothesis h;
    h.labels = tree.labels_of(beam[i].node);
    h.log_probability = beam[i].score;
    h.confidence = h.labels.empty() ? 0.0 : det_exp(h.log_probability / static_cast<double>(h.labels.size()));
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace

std::vector<Hypothesis> beam_search(std::span<const float> scores, int64_t steps, int64_t classes,
                                    const BeamOptions& options) {
  check_options(options);
  detail::check_scores(kWhat, scores, steps, classes, options.blank);
  check_limit(options, steps, classes);
  return search_one(scores, steps, classes, options, -1);
}

std::vector<std::vector<Hypothesis>> beam_search(const Tensor& scores, const BeamOptions& options) {
  const detail::Batch batch = detail::split_batch(kWhat, scores);
  check_options(options);
  detail::check_scores(kWhat, batch.batch > 0 ? batch.item(0) : std::span<const float>{},
                       batch.batch > 0 ? batch.steps : 0, batch.classes, options.blank);
  check_limit(options, batch.steps, batch.classes);
  std::vector<std::vector<Hypothesis>> out;
  out.reserve(static_cast<size_t>(batch.batch));
  for (int64_t b = 0; b < batch.batch; ++b)
    out.push_back(search_one(batch.item(b), batch.steps, batch.classes, options, b));
  return out;
}

}  // namespace onemodel::ctc
