// WindowLength: how many slots a burst's window takes (seed 001's reservation loop), by a range on
// its bytes, so neither switch divides: the controller writes the ranges from the uplink's rate, the
// day's length and what the ToR's hold loop costs (tablegen/reservation_loop.py). A burst larger than
// the last range gets the longest window (the controller's last range ends at 2^32 - 1); with no
// entry the length is 0 (not configured: nothing is asked, nothing granted). And the slot arithmetic
// of the loop's horizons (a port's horizon: (end << 16) | end slot; reservation_ocs.p4).
#ifndef P4SRC_INCLUDE_SCHEDULE_WINDOW_LENGTH_P4_
#define P4SRC_INCLUDE_SCHEDULE_WINDOW_LENGTH_P4_

#include "../defines.p4"
#include "../sizes.p4"

// Slots from `cur` until a port with horizon h is free (0: free now), in a cycle of `cycle` slots.
#define HORIZON_OFFSET(dst, h, cur, cycle, now) \
    if ((h)[63:16] <= (bit<48>) (now)) { \
        dst = 0; \
    } else if ((h)[15:0] >= (cur)) { \
        dst = (h)[15:0] - (cur); \
    } else { \
        dst = (h)[15:0] + (cycle) - (cur); \
    }

// a + b in a cycle of `cycle` slots (a < cycle, b < cycle).
#define SLOT_ADD(dst, a, b, cycle) \
    dst = (a) + (b); \
    if (dst >= (cycle)) { \
        dst = dst - (cycle); \
    }

// The key: the burst's bytes (v1model), or its 4 KiB units on Tofino, whose range match takes at most
// 20 bits (5 nibbles); tablegen/reservation_loop.py writes the ranges in the target's units.
#ifdef __TARGET_TOFINO__
#define WINDOW_KEY(bytes) (bytes)[31:12]
#else
#define WINDOW_KEY(bytes) (bytes)
#endif

control WindowLength(in bit<32> burst_bytes, out bit<16> slots) {

    action set_window(bit<16> length) {
        slots = length;
    }

    action no_window() {
        slots = 0;
    }

    table window_length {
        key = {
            WINDOW_KEY(burst_bytes): range @name("bytes");
        }
        actions = {
            set_window;
            no_window;
        }
        default_action = no_window();
        size = RESV_WINDOW_LENGTH_SIZE;
    }

    apply {
        slots = 0;
        window_length.apply();
    }
}

#endif  // P4SRC_INCLUDE_SCHEDULE_WINDOW_LENGTH_P4_
