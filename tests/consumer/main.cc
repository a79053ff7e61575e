// Example consumer: loads the sample classifier and prints its probabilities, using only installed headers.
#include <onemodel/onemodel.h>

#include <cmath>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer MODEL\n");
    return 2;
  }
  try {
    auto model = onemodel::Model::load(argv[1]);
    const float features[] = {5.1f, 3.5f, 1.4f, 0.2f};
    std::vector<float> probs = model.run(std::span<const float>(features));
    // getting-started.md: 0.2323, 0.2813, 0.4864
    const float want[] = {0.2323f, 0.2813f, 0.4864f};
    if (probs.size() != 3) return 1;
    for (int i = 0; i < 3; ++i) {
      std::printf("%.4f%s", probs[static_cast<size_t>(i)], i < 2 ? ", " : "\n");
      if (std::fabs(probs[static_cast<size_t>(i)] - want[i]) > 1e-4f) return 1;
    }
    std::printf("onemodel %s, kernels %s\n", onemodel::version(), std::string(model.session().kernel_path()).c_str());
    return 0;
  } catch (const onemodel::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
