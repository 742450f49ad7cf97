// The program's small-object allocator (zk/small_alloc.cc): what tests and figures may ask of it.
#pragma once

#include <cstddef>

namespace zk::small_alloc {

// Does this build replace operator new with it? (Not under AddressSanitizer, nor with
// LOCKSTEP_SMALL_ALLOC=OFF.)
bool enabled();
// Is `p` a block of one of its spans? Always false when !enabled().
bool owns(const void* p);
// The bytes mapped for spans so far (what the allocator holds from the system).
size_t mapped_bytes();

}  // namespace zk::small_alloc
