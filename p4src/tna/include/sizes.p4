// Tofino sizes: the v1model sizes plus the selector limits Tofino needs.
#ifndef P4SRC_TNA_INCLUDE_SIZES_P4_
#define P4SRC_TNA_INCLUDE_SIZES_P4_

#include "../../include/sizes.p4"

#ifndef MAX_GROUP_SIZE
#define MAX_GROUP_SIZE 64
#endif

#endif  // P4SRC_TNA_INCLUDE_SIZES_P4_
