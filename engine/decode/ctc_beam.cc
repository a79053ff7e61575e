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

// Creation order (ctc.md section 3). Within a step prefixes are created in processing order: the extended
// prefix's place in the beam, then the class; so (step, place, class), compared in that order, is the order
// of a global creation counter. The empty prefix comes first.
struct Id {
  int32_t step, place, label;
  bool operator<(const Id& o) const {
    if (step != o.step) return step < o.step;
    return place != o.place ? place < o.place : label < o.label;
  }
};

// One step a prefix was in the beam: its place there and whether `total` and `pb` were above -inf (which
// decides which of its extensions that step created).
struct Visit {
  int32_t step, place;
  bool total_live, pb_live;
};

// A prefix that has been in a beam. Prefixes only ever created as extensions and pruned at once are not
// stored: their creation order follows from the parent's visits (created_at), so memory grows with
// steps * beam width rather than with every prefix created, which for a recogniser with thousands of classes
// is millions.
struct Node {
  int32_t parent, label;
  Id id;
  std::vector<Visit> visits;
  std::vector<std::pair<int32_t, int32_t>> kids;  // (label, node) of stored children, by label
  int32_t stamp = -1, slot = 0;                   // its entry in the list of step `stamp`
};

// A prefix of the next step: a stored node, or (node < 0) the extension `label` of node `parent`.
struct Entry {
  int32_t node, parent, label;
  Id id;
  double pb, pnb, score;
};

class Search {
 public:
  Search(std::span<const float> scores, int64_t classes) : scores_(scores), classes_(classes) {
    nodes_.push_back(Node{-1, -1, Id{-1, 0, 0}, {}, {}});
  }

  const Node& node(int32_t k) const { return nodes_[static_cast<size_t>(k)]; }

  // The next step's entry of stored node `k`, made (pb = pnb = -inf) when that step has none yet.
  Entry& entry_of(int32_t k, std::vector<Entry>& next, int32_t step) {
    Node& n = nodes_[static_cast<size_t>(k)];
    if (n.stamp != step) {
      n.stamp = step;
      n.slot = static_cast<int32_t>(next.size());
      next.push_back(Entry{k, n.parent, n.label, n.id, kNegInf, kNegInf, kNegInf});
    }
    return next[static_cast<size_t>(n.slot)];
  }

  // When the extension `label` of node `p` was first created: at the first visit of `p` whose contribution
  // for `label` was not -inf (ctc.md section 3: a -inf contribution creates nothing). The current visit is
  // recorded before its extensions are made, so a visit is always found.
  Id created_at(const Node& p, int32_t label) const {
    for (const Visit& v : p.visits) {
      const bool base_live = label == p.label ? v.pb_live : v.total_live;
      const float score = scores_[static_cast<size_t>(v.step * classes_ + label)];
      if (base_live && score > -std::numeric_limits<float>::infinity()) return Id{v.step, v.place, label};
    }
    return Id{std::numeric_limits<int32_t>::max(), 0, label};  // unreachable
  }

  // Stores the kept entries that are not stored yet (their parents are).
  void store(std::vector<Entry>& kept) {
    for (Entry& e : kept) {
      if (e.node >= 0) continue;
      e.node = static_cast<int32_t>(nodes_.size());
      nodes_.push_back(Node{e.parent, e.label, e.id, {}, {}});
      auto& kids = nodes_[static_cast<size_t>(e.parent)].kids;
      const auto at = std::lower_bound(kids.begin(), kids.end(), std::make_pair(e.label, int32_t{-1}));
      kids.insert(at, {e.label, e.node});
    }
  }

  void visit(int32_t k, Visit v) { nodes_[static_cast<size_t>(k)].visits.push_back(v); }

  std::vector<int64_t> labels_of(int32_t k) const {
    std::vector<int64_t> out;
    for (; k > 0; k = node(k).parent) out.push_back(node(k).label);
    std::reverse(out.begin(), out.end());
    return out;
  }

 private:
  std::span<const float> scores_;
  int64_t classes_;
  std::vector<Node> nodes_;
};

std::vector<Hypothesis> search_one(std::span<const float> scores, int64_t steps, int64_t classes, const BeamOptions& o,
                                   int64_t b) {
  check_values(scores, steps, classes, o.scores, b);
  Search search(scores, classes);
  std::vector<Entry> beam{Entry{0, -1, -1, Id{-1, 0, 0}, 0.0, kNegInf, 0.0}};
  std::vector<Entry> next;
  std::vector<double> lp(static_cast<size_t>(classes));
  const auto blank = static_cast<size_t>(o.blank);
  const auto width = static_cast<size_t>(o.beam_width);
  for (int64_t t = 0; t < steps; ++t) {
    const auto step = static_cast<int32_t>(t);
    log_probabilities(scores.data() + t * classes, classes, o.scores, lp);
    next.clear();
    for (size_t place = 0; place < beam.size(); ++place) {
      const Entry& e = beam[place];
      const double total = e.score;  // logadd(pb, pnb), computed when the entry was ranked
      const int32_t c = e.label;
      search.visit(e.node, Visit{step, static_cast<int32_t>(place), total > kNegInf, e.pb > kNegInf});
      {
        Entry& self = search.entry_of(e.node, next, step);
        self.pb = det_logadd(self.pb, total + lp[blank]);
        if (c >= 0) self.pnb = det_logadd(self.pnb, e.pnb + lp[static_cast<size_t>(c)]);
      }
      // Stored children are found by a merge walk over the increasing classes.
      const auto& kids = search.node(e.node).kids;
      size_t kid = 0;
      for (int64_t j = 0; j < classes; ++j) {
        if (j == o.blank) continue;
        const double add = (j == c ? e.pb : total) + lp[static_cast<size_t>(j)];
        if (add == kNegInf) continue;  // probability 0: creates nothing
        const auto label = static_cast<int32_t>(j);
        while (kid < kids.size() && kids[kid].first < label) ++kid;
        if (kid < kids.size() && kids[kid].first == label) {
          Entry& ext = search.entry_of(kids[kid].second, next, step);
          ext.pnb = det_logadd(ext.pnb, add);
        } else {
          // Not stored, so not in this step's list yet: only this prefix extends to it.
          next.push_back(
              Entry{-1, e.node, label, search.created_at(search.node(e.node), label), kNegInf, add, kNegInf});
        }
      }
    }
    for (Entry& e : next) e.score = det_logadd(e.pb, e.pnb);
    // Best first, equal scores in creation order. Creation ids are distinct, so the order is total and the
    // first `width` of a partial sort are those of a full sort.
    const auto keep = std::min(next.size(), width);
    std::partial_sort(
        next.begin(), next.begin() + static_cast<std::ptrdiff_t>(keep), next.end(),
        [](const Entry& x, const Entry& y) { return x.score > y.score || (x.score == y.score && x.id < y.id); });
    next.resize(keep);
    search.store(next);
    beam.assign(next.begin(), next.end());  // `next` keeps its capacity: the list has beam * classes entries
  }
  std::vector<Hypothesis> out;
  const size_t n = std::min(beam.size(), static_cast<size_t>(o.top_n));
  for (size_t i = 0; i < n; ++i) {
    Hypothesis h;
    h.labels = search.labels_of(beam[i].node);
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
