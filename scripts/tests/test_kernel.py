"""nstat and ss parsers on real output shapes."""

import pytest

from scripts.hosts.kernel import nstat_delta, parse_nstat, parse_ss, ss_sampler_script

NSTAT = """#kernel
IpInReceives                    124033             0.0
TcpOutSegs                      1000               0.0
TcpRetransSegs                  12                 0.0
TcpExtTCPTimeouts               2                  0.0
"""

SS = """@@ 1700000000.100
ESTAB 0      181    10.0.2.2:40000 10.0.3.2:5201
\t cubic wscale:10,10 rto:204 rtt:0.779/0.237 ato:40 mss:1448 cwnd:18 bytes_sent:192475 retrans:0/3 rcv_rtt:11 minrtt:0.014
@@ 1700000000.200
ESTAB 0      0      10.0.2.2:40000 10.0.3.2:5201
\t cubic wscale:10,10 rto:408 rtt:1.5/0.2 mss:1448 cwnd:1 retrans:1/4 mrtt:0.9
"""


def test_nstat():
    before = parse_nstat(NSTAT)
    assert before["TcpRetransSegs"] == 12
    after = dict(before, TcpRetransSegs=20, TcpExtTCPTimeouts=3)
    d = nstat_delta(before, after)
    assert d["retrans_segs"] == 8 and d["timeouts"] == 1 and d["out_segs"] == 0


def test_ss():
    s = parse_ss(SS)
    assert [(x.t, x.peer, x.cwnd, x.rtt_ms, x.rto_ms, x.retrans_total, x.cc) for x in s] == [
        (1700000000.1, "10.0.3.2:5201", 18, 0.779, 204.0, 3, "cubic"),
        (1700000000.2, "10.0.3.2:5201", 1, 1.5, 408.0, 4, "cubic")]
    with pytest.raises(ValueError, match="ss sample mark"):
        parse_ss("@@ x\n")
    assert "ss -tinH dst 10.0.3.2" in ss_sampler_script("10.0.3.2", 0.1, "/tmp/x")
