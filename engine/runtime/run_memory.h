// Memory of run states: the slab and the arena's chunks (graph-runtime.md section 5, "Huge pages").
#pragma once
#include <cstddef>

#include "onemodel/tensor.h"

namespace onemodel::rt {

// Like allocate_storage (64-byte aligned, zero-filled, bytes <= 2^31-1), for buffers a run state keeps: on
// Linux, where the kernel offers transparent huge pages, a buffer of 2 MiB or more is its own anonymous mapping
// of whole 2 MiB huge pages (its length rounded up to them); elsewhere, and below 2 MiB, allocate_storage.
Storage allocate_run_storage(size_t bytes);

// True when allocate_run_storage maps huge pages on this machine (tests).
bool run_storage_uses_huge_pages();

}  // namespace onemodel::rt
