import os
import subprocess
import uuid

import pytest

from emulation.ocs.dataplane import IpLinkControl, circuit_entry, parse_link_specs
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import EmulatedOcs


def test_circuit_entry_and_link_specs():
    assert str(circuit_entry(1, 2)) == "circuit ingress_port=1 -> cross_connect(port=2)"
    assert parse_link_specs(["3=veth3", "3=x", "4=y"]) == {3: ["veth3", "x"], 4: ["y"]}
    with pytest.raises(ValueError, match="expected <dp-port>=<interface>"):
        parse_link_specs(["veth3"])
    # an interface on another server of a cluster run (a fibre between servers)
    assert parse_link_specs(["4=s3-eth2t:root@10.0.0.2"]) == {4: ["s3-eth2t:root@10.0.0.2"]}
    for bad in ("4=x:-oProxyCommand=y", "4=x:root@a b", "4=x:root@", "4=x:@10.0.0.2", "4=x:"):
        with pytest.raises(ValueError, match="ssh destination"):
            parse_link_specs([bad])


def test_a_remote_interface_goes_to_its_servers_batch_before_the_local_run():
    calls = []
    links = IpLinkControl({1: ["t1:root@10.0.0.2", "o1"], 2: ["t2:root@10.0.0.2"]},
                          runner=lambda argv, stdin: calls.append(("here", stdin)), ssh_words=["-o", "Port=2222"])
    remote = links._remote["root@10.0.0.2"]
    assert remote.argv[:1] == ["ssh"] and "Port=2222" in remote.argv and remote.argv[-4:] == ["ip", "-force", "-batch",
                                                                                              "-"]
    remote.send = lambda text: calls.append(("there", text))  # type: ignore[method-assign]
    links.set_links([(1, False), (2, False)])
    assert calls == [("there", "link set dev t1 down\nlink set dev t2 down\n"), ("here", "link set dev o1 down\n")]


def _operstate(ifname):
    with open(f"/sys/class/net/{ifname}/flags") as f:
        return int(f.read(), 16) & 1  # IFF_UP


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create a veth pair")
def test_ip_link_control_on_a_real_veth():
    tag = uuid.uuid4().hex[:5]
    a, b = f"ocsA{tag}", f"ocsB{tag}"
    subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
    try:
        subprocess.run(["ip", "link", "set", b, "up"], check=True)
        links = IpLinkControl({1: [a]})
        ocs = EmulatedOcs(2, DelayModel(mirror_ms=5, lock_ms=5, lock_jitter_ms=0, poll_period_ms=10,
                                        missed_poll_prob=0), links=links)
        try:
            ocs.init_links()
            ocs.wait_settled(1)
            assert _operstate(a) == 0
            ocs.connect([(2, 3)])  # light from slot 2 to slot 1: slot 1's link comes up
            assert ocs.wait_settled(2)
            assert _operstate(a) == 1
            ocs.disconnect([(2, 3)])
            assert ocs.wait_settled(2)
            assert _operstate(a) == 0
        finally:
            ocs.close()
    finally:
        subprocess.run(["ip", "link", "del", a], check=False)
