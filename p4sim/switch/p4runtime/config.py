"""Forwarding pipeline configs: verify, save, commit and reconcile, as SetForwardingPipelineConfig asks.

The device config is the bmv2 JSON, exactly as simple_switch_grpc takes it. RECONCILE_AND_COMMIT keeps
the forwarding state: with the same JSON the running pipeline stays as it is; with another, the new
pipeline is committed and the old state (members, groups, table entries with their direct counters,
default entries, PRE entries, counter, register and meter arrays of the same size) is replayed into
it by name, skipping what the new program cannot hold.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p4sim.switch.p4runtime.binding import Binding, bind
from p4sim.switch.p4runtime.errors import FAILED_PRECONDITION, P4RuntimeError, invalid
from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.schema import build_schema
from p4sim.switch.values import StateError

if TYPE_CHECKING:
    from p4sim.switch.device import Device
    from p4sim.switch.pipeline import Pipeline

log = logging.getLogger(__name__)

Action = p4r.SetForwardingPipelineConfigRequest


@dataclass(slots=True)
class Committed:
    """The running config: its binding and the ForwardingPipelineConfig message (P4Info, JSON, cookie)."""

    binding: Binding
    config: p4r.ForwardingPipelineConfig


def verify(device: Device, config: p4r.ForwardingPipelineConfig) -> Binding:
    """Load the bmv2 JSON and bind the P4Info to it; INVALID_ARGUMENT if either is bad."""
    if not config.HasField("p4info"):
        raise invalid("the forwarding pipeline config has no P4Info")
    if not config.p4_device_config:
        raise invalid("the forwarding pipeline config has no device config (bmv2 JSON expected)")
    try:
        schema = build_schema(config.p4info)
        pipeline = device.load_pipeline(config.p4_device_config)
    except ValueError as e:
        raise invalid(f"bad forwarding pipeline config: {e}") from None
    return bind(schema, pipeline)


def commit(device: Device, binding: Binding, keep_pre: bool = False) -> None:
    """Make the bound pipeline the running one (fresh state, the PRE too unless keep_pre).

    The device frees the replaced pipeline at once (Device.commit_pipeline), so the caller installs
    the new binding first and holds no reference to the old one.
    """
    if device.pipeline is not binding.pipeline:
        device.commit_pipeline(binding.pipeline, keep_pre=keep_pre)


def reconcile(device: Device, old: Committed | None, config: p4r.ForwardingPipelineConfig) -> Binding:
    """Bind a config and copy the running one's forwarding state into it where the programs agree.

    The caller holds the device lock and commits the result with keep_pre=True (the PRE is kept).
    """
    if old is not None and config.p4_device_config == old.config.p4_device_config:
        try:
            schema = build_schema(config.p4info)
        except ValueError as e:
            raise invalid(f"bad P4Info: {e}") from None
        binding = bind(schema, old.binding.pipeline)
        for tid, tb in binding.tables.items():  # carry controller metadata over
            prev = old.binding.tables.get(tid)
            if prev is not None and prev.info.name == tb.info.name:
                tb.extra = prev.extra
        log.info("reconcile: same device config, state kept")
        return binding
    binding = verify(device, config)
    if old is not None:
        # into the new pipeline before it runs: it starts with the state, and nothing refers to the
        # old one once the caller commits (so the device frees it then)
        skipped = _replay(old.binding.pipeline, binding.pipeline)
        log.info("reconcile: new device config, state replayed (%d objects skipped)", skipped)
    return binding


def _replay(old: Pipeline, new: Pipeline) -> int:
    skipped = 0
    for name, prof in old.profiles.items():
        target = new.profiles.get(name)
        for m in prof.members.values():
            skipped += _try(lambda t=target, m=m: t.insert_member(m.id, m.action), target)
        for g in prof.groups.values():
            members = [(m.id, w, watch) for m, w, watch in g.members]
            skipped += _try(lambda t=target, g=g, ms=members: t.insert_group(g.id, ms, g.max_size), target)
    for name, table in old.tables.items():
        target = new.tables.get(name)
        default = table.get_default()
        if target is not None and not table.default_const and default is not None:
            skipped += _try(lambda t=target, d=default: t.set_default(d), target)
        for e in table.entries():
            if e.is_const:
                continue
            skipped += _try(lambda t=target, e=e: _copy_entry(t, e), target)
    for name, arr in old.counters.items():
        dst = new.counters.get(name)
        if dst is not None and dst.size == arr.size:
            dst.packets, dst.bytes = list(arr.packets), list(arr.bytes)
    for name, reg in old.registers.items():
        dst_reg = new.registers.get(name)
        if dst_reg is not None and dst_reg.size == reg.size and dst_reg.bitwidth == reg.bitwidth:
            dst_reg.cells = list(reg.cells)
    for name, meter in old.meters.items():
        dst_m = new.meters.get(name)
        if dst_m is not None and dst_m.size == meter.size:
            for i in range(meter.size):
                cfg = meter.get_config(i)
                if cfg is not None:
                    dst_m.set_config(i, cfg)
    return skipped


def _copy_entry(target, e) -> None:  # noqa: ANN001
    """Insert an entry of the old pipeline into a table of the new one, with its direct counter values."""
    new = target.insert(e.key, e.action, e.priority)
    new.packets, new.bytes = e.packets, e.bytes


def _try(fn, target) -> int:  # noqa: ANN001
    if target is None:
        return 1
    try:
        fn()
        return 0
    except (StateError, ValueError) as e:
        log.warning("reconcile: skipped: %s", e)
        return 1


def get_response(committed: Committed | None, response_type: int) -> p4r.GetForwardingPipelineConfigResponse:
    """Build a GetForwardingPipelineConfig response; FAILED_PRECONDITION if no pipeline is set."""
    if committed is None:
        raise P4RuntimeError(FAILED_PRECONDITION, "no forwarding pipeline config set on this device")
    req = p4r.GetForwardingPipelineConfigRequest
    resp = p4r.GetForwardingPipelineConfigResponse()
    src = committed.config
    out = resp.config
    if src.HasField("cookie"):
        out.cookie.CopyFrom(src.cookie)
    if response_type in (req.ALL, req.P4INFO_AND_COOKIE):
        out.p4info.CopyFrom(src.p4info)
    if response_type in (req.ALL, req.DEVICE_CONFIG_AND_COOKIE):
        out.p4_device_config = src.p4_device_config
    if response_type not in (req.ALL, req.P4INFO_AND_COOKIE, req.DEVICE_CONFIG_AND_COOKIE, req.COOKIE_ONLY):
        raise invalid(f"unknown response_type {response_type}")
    return resp
