// ScheduleClock: where now falls in a time-sliced optical schedule (OCSEMU, Mordia, RotorNet),
// computed from the packet's own timestamp; shared by the OCS (include/ocs/timeflow.p4) and the
// ToRs (include/fabric/slot_route.p4). The controller writes the schedule once: no write per slot.
//
//   t     = now - epoch, in set_schedule     (the schedule has not started while t is negative:
//                                            TIME_NEGATIVE; one subtraction with the action's data)
//   phase = position of t in the cycle, in 2^-SCHEDULE_PHASE_BITS cycles (SCHEDULE_PHASE glue:
//           v1model multiplies by 2^(32+PHASE_BITS)/cycle and keeps bits 32.., no division;
//           TNA masks t with a power-of-two cycle)
//   schedule_phase (range on phase) -> slot, night
#ifndef P4SRC_INCLUDE_SCHEDULE_CLOCK_P4_
#define P4SRC_INCLUDE_SCHEDULE_CLOCK_P4_

#include "../defines.p4"
#include "../metadata.p4"

// ScheduleClock's apply signature, for a control given the clock (include/fabric/control_types.p4).
control ClockControl(in time_t now, inout schedule_t sched);

control ScheduleClock(in time_t now, inout schedule_t sched) {

    DECLARE_DIRECT_COUNTER(phase_counter)

    // v1model (epoch_us, scale); TNA (the negated epoch, mask): p4src/README.md. The time since the
    // epoch is taken here, from the action's data, so the phase is one operation later (Tofino: a stage).
    action set_schedule(time_t epoch_us, SCHEDULE_SCALE_T cycle_scale) {
        sched.on = 1;
        SCHEDULE_SINCE(sched.t, now, epoch_us);
        sched.scale = cycle_scale;
    }

    action schedule_off() {
        sched.on = 0;
        sched.t = 0;
    }

    // The clock of the schedule. Keyless: only its default action. epoch_us is in the switch's own
    // time (us since it started: the controller reads it with a clock probe, p4src/README.md).
    table schedule_config {
        key = {}
        actions = {
            set_schedule;
            schedule_off;
        }
        default_action = schedule_off();
        size = 1;
    }

    // `end`: for a day, the phase at which it ends (the range's high + 1): what is left of it
    // (SlotRoute's day budget at a ToR); for a night, the phase at which its slot's day begins
    // (a window lit through the night counts its budget from there).
    action set_slot(slot_t slot, bit<1> night, bit<32> end) {
        sched.slot = slot;
        sched.night = night;
        sched.end = end;
        DIRECT_COUNT(phase_counter);
    }

    action phase_unknown() {
        sched.night = 1;  // not covered by the schedule: nothing is lit
        sched.end = sched.phase;
        DIRECT_COUNT(phase_counter);
    }

    // The cycle as ranges of phase: a night, then a day, per slot (two entries per slot). A range
    // match, so the controller places boundaries anywhere (the slot length is no power of two);
    // the direct counter counts the packets of each day and night (telemetry, and the PTF tests
    // read which range a packet fell in). SCHEDULE_PHASE_BITS (20) bits: all a v1model phase has,
    // and the most Tofino's range match takes (5 nibbles; a TNA cycle is at most 2^20 units).
    table schedule_phase {
        key = {
            sched.phase[SCHEDULE_PHASE_BITS - 1:0]: range @name("phase");
        }
        actions = {
            set_slot;
            phase_unknown;
        }
        default_action = phase_unknown();
        counters = phase_counter;
        size = SCHEDULE_PHASE_SIZE;
    }

    // Flat (Tofino 1 places a block's tables before anything after it): the phase is computed
    // whether or not a schedule runs (unused then), and the range looked up once it has started.
    apply {
        sched.night = 1;
        sched.slot = 0;
        sched.end = 0;
        schedule_config.apply();
        SCHEDULE_PHASE(sched.phase, sched.t, sched.scale);
        if (sched.on == 1 && !TIME_NEGATIVE(sched.t)) {
            schedule_phase.apply();
        }
        if (TIME_NEGATIVE(sched.t)) {
            sched.on = 0;  // not started yet
        }
    }
}

#endif  // P4SRC_INCLUDE_SCHEDULE_CLOCK_P4_
