"""The ocs-emulator's options: those an experiment may set, their checks, and the delay model's.

An experiment (a spec variant's `ocs_args`, `emulation run --ocs-arg`, the scripts' Emulation calls)
may set the delay model, the schedule and the client limits, nothing else: addresses, files, ports
and the links it sets down and up are the emulation's own. `check_ocs_args` parses such a list with
those options only and checks every value as the emulator would, so a bad one is refused in one line
before anything starts.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from emulation.ocs.delay import DelayModel, check_ms
from emulation.ocs.emulator import MAX_PORTS
from emulation.ocs.schedule import check_thread_slot
from emulation.ocs.server import IDLE_TIMEOUT_S, MAX_CLIENTS, check_limits


def ports_arg(text: str) -> int:
    """--ports: the switch size N, checked before anything is allocated for it."""
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_PORTS:
        raise argparse.ArgumentTypeError(f"{text!r}: expected an integer 1..{MAX_PORTS}")
    return int(text)


def slots_arg(text: str) -> list[int]:
    """--schedule-slots: "1,3,4" (empty: every slot)."""
    items = [s.strip() for s in text.split(",") if s.strip()]
    if not all(s.isascii() and s.isdigit() and len(s) <= 4 for s in items):
        raise argparse.ArgumentTypeError(f"{text!r}: expected slot numbers separated by commas, e.g. 1,3,4")
    return [int(s) for s in items]


def add_delay_args(p: argparse.ArgumentParser) -> None:
    """The delay model options (defaults: thesis Table 4.3)."""
    d = DelayModel()
    g = p.add_argument_group("delay model (ms; defaults reproduce thesis Table 4.3)")
    g.add_argument("--mirror-ms", type=float, default=d.mirror_ms, metavar="MS", help="MEMS mirror time")
    g.add_argument("--lock-ms", type=float, default=d.lock_ms, metavar="MS", help="transceiver lock time")
    g.add_argument("--lock-jitter-ms", type=float, default=d.lock_jitter_ms, metavar="MS")
    g.add_argument("--poll-ms", type=float, default=d.poll_period_ms, metavar="MS", help="ToR port polling period")
    g.add_argument("--missed-poll-prob", type=float, default=d.missed_poll_prob, metavar="P")
    g.add_argument("--missed-poll-jitter-ms", type=float, default=d.missed_poll_jitter_ms, metavar="MS")
    g.add_argument("--seed", type=int, default=None, metavar="N", help="random seed (default: random)")
    g.add_argument("--instant", action="store_true", help="every delay 0")


def delay_from_args(args: argparse.Namespace) -> DelayModel:
    """Build the DelayModel the options describe (ValueError naming a bad value)."""
    if args.instant:
        return DelayModel(0, 0, 0, 0, 0, 0, seed=args.seed)
    return DelayModel(args.mirror_ms, args.lock_ms, args.lock_jitter_ms, args.poll_ms,
                      args.missed_poll_prob, args.missed_poll_jitter_ms, seed=args.seed)


def add_experiment_args(p: argparse.ArgumentParser) -> None:
    """The options an experiment may set: client limits, the schedule, the delay model."""
    p.add_argument("--max-clients", type=int, default=MAX_CLIENTS, metavar="N",
                   help=f"open SCPI connections at most; more wait in the listen backlog (default {MAX_CLIENTS})")
    p.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT_S, metavar="S",
                   help=f"close a connection silent this long (default {IDLE_TIMEOUT_S:.0f} s; shorter while "
                        "every slot is taken, ScpiServer)")
    p.add_argument("--schedule", choices=["none", "round-robin"], default="none",
                   help="cycle circuit maps instead of taking commands' timing from the delay model")
    p.add_argument("--day-ms", type=float, default=100.0, metavar="MS")
    p.add_argument("--night-ms", type=float, default=10.0, metavar="MS")
    p.add_argument("--schedule-slots", type=slots_arg, default=[], metavar="1,2,...",
                   help="slots in the round robin (default all)")
    p.add_argument("--schedule-mode", choices=["thread", "dataplane"], default="thread",
                   help="thread: set each map from a thread (writes and link changes per slot); dataplane: "
                        "write the cycle once into the ocs switch's time-flow tables (needs --dataplane)")
    add_delay_args(p)


def check_options(args: argparse.Namespace) -> DelayModel:
    """Check every value of the experiment options as the emulator uses it; the delay model."""
    check_limits(args.max_clients, args.idle_timeout)
    if args.schedule == "round-robin":
        day, night = check_ms("--day-ms", args.day_ms, low_open=True), check_ms("--night-ms", args.night_ms)
        if args.schedule_mode == "thread":
            check_thread_slot(day, night)
    return delay_from_args(args)


class _Refusing(argparse.ArgumentParser):
    """A parser whose errors are ValueErrors (a spec's options are data, not a command line to exit from)."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def check_ocs_args(args: object) -> list[str]:
    """`args` when every item is an option an experiment may set (add_experiment_args, spelt in full)
    with a valid value; ValueError naming the first that is not."""
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"ocs_args {args!r}: expected a list of ocs-emulator options (strings)")
    p = _Refusing(prog="ocs_args", add_help=False, allow_abbrev=False)
    add_experiment_args(p)
    try:
        check_options(p.parse_args(args))
    except ValueError as exc:  # argparse quotes the bad text as it is: escaped, so the error stays one line
        detail = str(exc).encode("unicode_escape").decode("ascii")
        if detail.startswith("unrecognized arguments"):
            detail += ("; expected options of the delay model, the schedule or the client limits, in full "
                       "(python -m emulation ocs-emulator --help)")
        raise ValueError(f"ocs_args: {detail}") from None
    return list(args)
