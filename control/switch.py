"""One switch under control: a P4Runtime session, its pipeline and the state it should hold."""

from __future__ import annotations

import copy
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from fabric.contract import LATE_TABLES, SENTINEL_ACTIONS
from p4rt.bfconfig import pack_bf_pipeline_config
from p4rt.client import EntityLike, P4RuntimeClient, wildcard
from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.errors import P4RuntimeError, applied
from p4rt.proto import p4r
from p4rt.reconcile import Held, Index, Plan, encode, entry_key, plan, tables_with_defaults
from p4rt.resources import CloneSession, MulticastGroup
from p4rt.schema import P4Schema, short_name
from p4rt.state import SwitchState
from p4rt.tls import TlsOptions

log = logging.getLogger(__name__)
PREPARED_MAX = 8  # a procedure prepares at most 4 states a switch (shadow, mid, gradual, new)


# Device config formats the controller can push: bmv2 JSON (bmv2, p4sim) or Stratum's BfPipelineConfig.
TARGETS = ("bmv2", "tofino")


@dataclass(slots=True)
class Pipeline:
    """A compiled program: P4Info, device config (bmv2 JSON, or Tofino's BfPipelineConfig) and a
    cookie identifying the pair."""

    name: str
    schema: P4Schema
    config: bytes
    cookie: int

    @classmethod
    def load(cls, name: str, p4info: str | Path, config: str | Path) -> Pipeline:
        """Load `<name>.p4info.txtpb` and `<name>.json`-like files."""
        schema = P4Schema.load(p4info)
        data = Path(config).read_bytes()
        digest = hashlib.sha256(schema.p4info.SerializeToString(deterministic=True) + data).digest()
        return cls(name, schema, data, int.from_bytes(digest[:8], "big") >> 1)

    @classmethod
    def from_build(cls, name: str, build_dir: str | Path) -> Pipeline:
        """The `make p4-build` outputs: build/<name>.json and build/<name>.p4info.txtpb."""
        d = Path(build_dir)
        info, js = d / f"{name}.p4info.txtpb", d / f"{name}.json"
        for f in (info, js):
            if not f.exists():
                raise ValueError(f"pipeline file {str(f)!r}: missing; expected `make p4-build` outputs")
        return cls.load(name, info, js)

    @classmethod
    def from_tofino_build(cls, name: str, build_dir: str | Path) -> Pipeline:
        """bf-p4c's output for Tofino: <dir>/<name>.p4info.txtpb and <dir>/<name>.conf (with bfrt.json,
        and context.json and tofino.bin per pipe), packed as Stratum's BfPipelineConfig; or the same in
        <dir>/<name>/ (`hitless build --tofino CHIP`: <build>/tofino/<chip>/<program>/)."""
        d = Path(build_dir)
        if not (d / f"{name}.conf").exists() and (d / name / f"{name}.conf").exists():
            d = d / name
        info, conf = d / f"{name}.p4info.txtpb", d / f"{name}.conf"
        for f in (info, conf):
            if not f.exists():
                raise ValueError(f"pipeline file {str(f)!r}: missing; expected bf-p4c's output "
                                 f"(hitless build --tofino tofino, or bf-p4c --arch tna -o {d} --p4runtime-files {info} "
                                 f"--p4runtime-force-std-externs p4src/tna/{name}.p4)")
        schema = P4Schema.load(info)
        data = pack_bf_pipeline_config(conf)
        digest = hashlib.sha256(schema.p4info.SerializeToString(deterministic=True) + data).digest()
        return cls(name, schema, data, int.from_bytes(digest[:8], "big") >> 1)

    @classmethod
    def for_target(cls, target: str, name: str, build_dir: str | Path) -> Pipeline:
        """The pipeline of `target`: "bmv2" (bmv2 and p4sim: the JSON) or "tofino" (BfPipelineConfig)."""
        if target == "bmv2":
            return cls.from_build(name, build_dir)
        if target == "tofino":
            return cls.from_tofino_build(name, build_dir)
        raise ValueError(f"target {target!r}: expected one of {', '.join(TARGETS)}")


class StaleView(Exception):
    """The switch may hold what another controller wrote: this controller will not write its own view."""


def state_of_held(name: str, program: str, device_id: int, schema: P4Schema, held: Held) -> SwitchState:
    """What a switch holds, read back as a desired state (entries, defaults, members, groups, PRE)."""
    st = SwitchState(name, program, device_id)
    st.entries = [TableEntry.from_proto(schema, e) for e in held.entries]
    st.defaults = [TableEntry.from_proto(schema, e) for e in held.defaults]
    st.members = [ActionProfileMember.from_proto(schema, e) for e in held.members]
    st.groups = [ActionProfileGroup.from_proto(schema, e) for e in held.groups]
    for e in held.pre:
        if e.packet_replication_engine_entry.WhichOneof("type") == "multicast_group_entry":
            st.multicast.append(MulticastGroup.from_proto(schema, e))
        else:
            st.clones.append(CloneSession.from_proto(schema, e))
    return st


class SwitchSession:
    """Connects to one switch, pushes its pipeline when it lacks it, and syncs desired states.

    Arbitration (P4Runtime spec, "Client Arbitration Notifications"): when another controller becomes
    primary here, this session's view (`desired`, the write cache) may go stale; it says so once
    (`superseded` holds the other's election id) and drops the cache. When it is primary again on the
    same, unbroken stream, `resync()` re-reads the switch and adopts what it holds as `desired`
    (`resync_due`). If the stream broke meanwhile (a restart), `recover()` connects but writes nothing
    and raises StaleView: the stale view is never restored. A full `sync()` (an explicit install)
    reads the switch and makes this controller's view current again.
    """

    def __init__(self, name: str, address: str, device_id: int, pipeline: Pipeline,
                 election_id: tuple[int, int] = (0, 1), timeout: float = 10.0, batch_size: int = 1000,
                 tls: TlsOptions | None = None) -> None:
        self.name = name
        self.pipeline = pipeline
        self.client = P4RuntimeClient(address, device_id, election_id, timeout=timeout, tls=tls)
        self.batch_size = batch_size
        self.desired: SwitchState | None = None
        self._cache: Index | None = None  # what the switch holds after our last successful sync
        # states already encoded: those prepared for a procedure's syncs, and the last one synced
        # (states are values: never changed once given to prepare or sync)
        self._prepared: list[tuple[SwitchState, Index]] = []
        self.lock = threading.RLock()
        self.reconnects = 0
        self.superseded: tuple[int, int] | None = None  # another primary's election id since our view was current
        self.resync_due = False  # primary again on an unbroken stream: re-read before writing
        self._refused = False  # the stream broke while superseded: the switch cannot be re-read into a view
        self.on_primary_change: Callable[[SwitchSession, str, tuple[int, int] | None], None] | None = None
        self.client.on_arbitration(self._on_arbitration)

    def _on_arbitration(self, primary: bool, election_id: tuple[int, int] | None) -> None:
        """Stream thread: note when another controller is or was primary here."""
        if not primary and election_id is not None and election_id != self.client.election_id:
            if self.superseded is None:
                self.superseded = election_id
                self._cache = None
                log.warning("%s: election id %s is primary now: this controller's view of the switch may go "
                            "stale; it will re-read the switch before writing again", self.name, election_id)
                if self.on_primary_change is not None:
                    self.on_primary_change(self, "primary-lost", election_id)
            self.resync_due = False
        elif primary and self.superseded is not None and not self._refused and not self.resync_due:
            self.resync_due = True
            log.warning("%s: primary again (election id %s was primary meanwhile): re-reading the switch",
                        self.name, self.superseded)
            if self.on_primary_change is not None:
                self.on_primary_change(self, "primary-regained", self.superseded)

    @property
    def address(self) -> str:
        """The switch's P4Runtime address."""
        return self.client.address

    @property
    def schema(self) -> P4Schema:
        """The pipeline's schema."""
        return self.pipeline.schema

    def connect(self, timeout: float | None = None) -> bool:
        """Connect as primary and make sure the switch runs our pipeline; True when it was (re)pushed."""
        with self.lock:
            if not self.client.connect(timeout):
                raise P4RuntimeError(grpc.StatusCode.PERMISSION_DENIED, f"{self.name}: another controller is primary",
                                     operation="connect")
            have = self.client.get_pipeline()
            if have is not None and self.client.pipeline_cookie == self.pipeline.cookie:
                self.client.schema = self.pipeline.schema
                return False
            self.client.set_pipeline(self.pipeline.schema, self.pipeline.config, self.pipeline.cookie)
            log.info("%s: pipeline %s pushed", self.name, self.pipeline.name)
            return True

    def read_held(self, want: SwitchState | None = None) -> Held:
        """Read entries, defaults (of the tables `want` sets), members, groups, and the multicast groups
        and clone sessions if `want` has any."""
        s = self.schema
        c = self.client
        held = Held()
        held.entries = [e for e in c.read([wildcard(s, "table_entry")]) if not e.table_entry.is_default_action]
        if want is not None:
            defaults = [TableEntry(t, default=True) for t in tables_with_defaults(s, want)]
            if defaults:
                held.defaults = c.read(defaults)
        if len(s.action_profiles):
            held.members = c.read([wildcard(s, "action_profile_member")])
            held.groups = c.read([wildcard(s, "action_profile_group")])
        if want is not None and want.multicast:
            held.pre += c.read([wildcard(s, "multicast_group_entry")])
        if want is not None and want.clones:
            held.pre += c.read([wildcard(s, "clone_session_entry")])
        return held

    def read(self, entities: Iterable[EntityLike]) -> list[Any]:
        """Read entities (counters, entries) as entity objects; a read never changes the desired state."""
        return self.client.read_entities(entities)

    def counter_packets(self, counters: Iterable[str], indexes: Sequence[int]) -> dict[str, int]:
        """Packets of each indirect counter, summed over the indexes (one read per counter)."""
        return self.client.counter_packets(counters, indexes)

    def prepare(self, want: SwitchState) -> None:
        """Encode a state a later sync will write (the very object, unchanged meanwhile), so that sync
        only diffs and writes; the last PREPARED_MAX encoded states are kept (synced ones included)."""
        with self.lock:
            if any(st is want for st, _ in self._prepared):
                return
        index = Index.of_state(self.schema, want)
        with self.lock:
            self._prepared = [(st, ix) for st, ix in self._prepared if st is not want][-(PREPARED_MAX - 1):]
            self._prepared.append((want, index))

    def _index(self, want: SwitchState) -> Index:
        hit = next((ix for st, ix in reversed(self._prepared) if st is want), None)
        if hit is None:
            hit = Index.of_state(self.schema, want)
            self._prepared = [*self._prepared[-(PREPARED_MAX - 1):], (want, hit)]
        return hit

    def sync(self, want: SwitchState, delete: bool = True, trust_cache: bool = False) -> Plan:
        """Write only the difference between the switch and `want`; `want` becomes the desired state.

        With trust_cache, diff against what our last sync left instead of reading the switch (a
        procedure step on a switch nobody else writes); a failed or lost session drops the cache.
        """
        with self.lock:
            w = self._index(want)
            if trust_cache and self._cache is not None and self.client.connected:
                h = self._cache
            else:
                h = Index.of_held(self.schema, self.read_held(want))
            read = h is not self._cache
            p = plan(self.schema, w, h, delete=delete, late_tables=LATE_TABLES, sentinels=SENTINEL_ACTIONS)
            self._cache = None
            for phase in p.phases:
                self.client.write(phase, batch_size=self.batch_size)
            if delete and read and self.client.is_primary:  # written over a fresh read: our view is current
                self.superseded, self.resync_due, self._refused = None, False, False
            if delete:
                self._cache = w
            elif p.rebuilt:
                self._cache = None  # a rebuild deleted held state outside `want`: read it next time
            else:
                kept = h.copy()
                for name in ("entries", "defaults", "members", "groups", "pre"):
                    getattr(kept, name).update(getattr(w, name))
                self._cache = kept
            self.desired = want
            if not p.empty:
                log.info("%s: synced (%s)", self.name, p)
            return p

    def empty_state(self) -> SwitchState:
        """A state of this switch's program with nothing in it (what a change starts from before any sync)."""
        return SwitchState(self.name, self.pipeline.name, self.client.device_id)

    def apply(self, add: Sequence[TableEntry] = (), remove: Sequence[TableEntry] = ()) -> SwitchState:
        """Change the desired state by a few table entries and write just that change, without reading or
        diffing the rest (a grant, a circuit): DELETE `remove` (one Write), then INSERT `add` (one Write;
        MODIFY for a default entry or an entry desired already, nothing for one desired as it is).
        Returns the new desired state.

        When a Write fails its P4RuntimeError is raised with the per-update details: `remove` has left
        the desired state all the same (a reconcile deletes what the switch kept), and the adds have
        joined it but for those the switch refused (a switch that is away gets them with the rest when
        it is back: `recover`)."""
        with self.lock:
            base = self.desired or self.empty_state()
            index = self._index(base).copy()
            gone = [encode(self.schema, e) for e in remove]
            drop = {entry_key(p.table_entry) for _, p in gone}
            ups = [(e, *encode(self.schema, e)) for e in add]
            writes = []
            for e, text, proto in ups:
                key = proto.table_entry.table_id if e.default else entry_key(proto.table_entry)
                held = (index.defaults if e.default else index.entries).get(key)
                if held is None or held[0] != text or key in drop:
                    kind = p4r.Update.MODIFY if e.default or (held is not None and key not in drop) else p4r.Update.INSERT
                    writes.append((e, key, text, proto, kind))
            failed: set[int] = set()
            error = None
            try:
                if gone:
                    self.client.write([p4r.Update(type=p4r.Update.DELETE, entity=p) for _, p in gone])
                if writes:
                    try:
                        self.client.write([p4r.Update(type=k, entity=p) for *_, p, k in writes])
                    except P4RuntimeError as exc:
                        failed = {i for i, ok in enumerate(applied(exc, len(writes), True)) if not ok}
                        raise
            except P4RuntimeError as exc:
                error = exc
            for key in drop:
                index.entries.pop(key, None)
            taken = [w for i, w in enumerate(writes) if i not in failed]
            for e, key, text, proto, _ in taken:
                (index.defaults if e.default else index.entries)[key] = (text, proto)
            new = self._changed(base, remove, [w[0] for w in taken])
            self._prepared = [*self._prepared[-(PREPARED_MAX - 1):], (new, index)]
            self._cache = index if self._cache is not None and error is None else None
            self.desired = new
            if error is not None:
                raise error
            return new

    def _changed(self, base: SwitchState, remove: Sequence[TableEntry], add: Sequence[TableEntry]) -> SwitchState:
        """A copy of `base` without the entries matching `remove` and with `add` (by key, as the switch
        identifies them); only the tables they touch are encoded."""
        tables = {short_name(e.table) for e in [*remove, *add]}

        def key(e: TableEntry) -> Any:
            proto = e.to_proto(self.schema).table_entry
            return ("default", proto.table_id) if e.default else entry_key(proto)

        out_keys = {key(e) for e in [*remove, *add]}
        new = copy.copy(base)
        new.entries = [e for e in base.entries if short_name(e.table) not in tables or key(e) not in out_keys]
        new.defaults = [e for e in base.defaults if short_name(e.table) not in tables or key(e) not in out_keys]
        new.entries += [e for e in add if not e.default]
        new.defaults += [e for e in add if e.default]
        return new

    def adopt(self) -> SwitchState:
        """Read the switch and make what it holds the desired state (a switch another writer set up, taken
        over: later changes start from it)."""
        with self.lock:
            held = self.read_held(self.desired)
            st = state_of_held(self.name, self.pipeline.name, self.client.device_id, self.schema, held)
            self._cache = Index.of_held(self.schema, held)
            self.desired = st
            return st

    def resync(self) -> SwitchState | None:
        """Primary again after another controller: re-read the switch and adopt what it holds as `desired`
        (None when no re-read is due any more, e.g. an install got there first).

        Raises StaleView when the switch runs no pipeline or another one (nothing to re-read into a view)."""
        with self.lock:
            other = self.superseded
            if not self.resync_due or other is None:
                return None
            if self.client.get_pipeline() is None or self.client.pipeline_cookie != self.pipeline.cookie:
                self._refused, self.resync_due = True, False
                raise StaleView(f"{self.name}: not restored: after election id {other} was primary here the switch "
                                f"runs no pipeline or another one (cookie {self.client.pipeline_cookie}); re-run "
                                "`control install` to take it over")
            self.client.schema = self.pipeline.schema
            st = self.adopt()
            self.superseded, self.resync_due = None, False
            log.warning("%s: re-read after election id %s was primary: %d entries, %d members, %d groups are now "
                        "this controller's view", self.name, other, len(st.entries), len(st.members), len(st.groups))
            return st

    def recover(self, timeout: float = 2.0) -> Plan | None:
        """After a lost connection or a restart: reconnect, re-push the pipeline if gone, reconcile.

        Raises StaleView, writing nothing, when another controller was primary here since this
        controller's view was last current (the switch may have restarted: there is nothing to re-read)."""
        with self.lock:
            self._cache = None
            if self.superseded is not None:
                self._refused, self.resync_due = True, False
                self.client.connect(timeout)  # arbitration only
                self.reconnects += 1
                raise StaleView(f"{self.name}: not restored: election id {self.superseded} was primary here and the "
                                "connection broke before this controller could re-read the switch, so its view may "
                                "be stale; re-run `control install` to take the network over")
            self.connect(timeout)
            self.reconnects += 1
            if self.desired is None:
                return None
            return self.sync(self.desired)

    def close(self) -> None:
        """Close the session."""
        self.client.close()


def wait_until(pred, timeout: float, step: float = 0.01) -> bool:
    """Poll `pred()` until true or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return bool(pred())
