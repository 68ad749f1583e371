"""python -m tablegen: generate, check, errors."""

import json

import pytest

from tablegen.__main__ import main
from topo.generators import fattree, ucd4
from topo.model import save


@pytest.fixture
def ft4(tmp_path):
    path = tmp_path / "ft4.json"
    save(fattree(4), path)
    return path


def test_generate_and_check(ft4, tmp_path, capsys):
    out = tmp_path / "ecmp"
    assert main([str(ft4), "--mode", "ecmp", "-o", str(out)]) == 0
    assert len(list(out.glob("*.json"))) == 20
    assert "20 files, 468 table entries" in capsys.readouterr().out
    doc = json.loads((out / "e0_0.json").read_text())
    assert doc["switch"] == "e0_0" and doc["device_id"] == 1
    assert main(["check", str(out), str(ft4), "--mode", "ecmp"]) == 0
    assert "checked 240 host pairs x 2 versions" in capsys.readouterr().out
    doc["table_entries"] = [e for e in doc["table_entries"] if e["table"] != "route" or e.get("action") != "set_path"]
    (out / "e0_0.json").write_text(json.dumps(doc))
    assert main(["check", str(out), str(ft4)]) == 1
    assert "no route at e0_0" in capsys.readouterr().out


def test_ucd4_circuits(tmp_path, capsys):
    topo = tmp_path / "ucd4.json"
    save(ucd4(), topo)
    assert main([str(topo), "--mode", "static", "--circuits", "reconfigured", "-o", str(tmp_path / "r"),
                 "--check"]) == 0
    assert "OK" in capsys.readouterr().out
    ocs = json.loads((tmp_path / "r" / "ocs.json").read_text())
    assert ocs["program"] == "ocs" and len(ocs["table_entries"]) == 4
    assert main([str(topo), "--mode", "static", "-o", str(tmp_path / "i")]) == 0
    capsys.readouterr()
    assert main(["diff", str(tmp_path / "i"), str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "s2: ~ path path_id=3 version=0" in out and out.endswith("12 changes on 5 switches\n")


def test_failover_off_and_check(ft4, tmp_path, capsys):
    on, off = tmp_path / "on", tmp_path / "off"
    assert main([str(ft4), "-o", str(on)]) == 0
    assert main([str(ft4), "--failover", "off", "-o", str(off), "--check"]) == 0
    assert "OK" in capsys.readouterr().out
    assert main(["check", str(off), str(ft4), "--failover", "off"]) == 0
    assert main(["check", str(on), str(ft4), "--failover", "on"]) == 0
    capsys.readouterr()
    assert main(["check", str(off), str(ft4), "--failover", "on"]) == 2
    assert "watches no port (failover on)" in capsys.readouterr().err
    assert main(["diff", str(on), str(off)]) == 0
    out = capsys.readouterr().out
    assert out.endswith("80 changes on 20 switches\n")  # one port_liveness entry per switch port (4 x 20)
    assert all(" ~ port_liveness " in line for line in out.splitlines()[:-1]), out


@pytest.mark.parametrize("argv,msg", [
    (["{topo}", "--circuits", "bogus", "-o", "{tmp}/x"], "tablegen: circuits 'bogus'"),
    (["{tmp}/none.json", "-o", "{tmp}/x"], "tablegen: topology file"),
    (["check", "{tmp}/nodir", "{topo}"], "tablegen: entry directory"),
])
def test_errors_are_one_line(argv, msg, ft4, tmp_path, capsys):
    argv = [a.format(topo=ft4, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(msg) and err.count("\n") == 1


def test_output_that_is_a_file_is_one_line(ft4, tmp_path, capsys):
    out = tmp_path / "taken"
    out.write_text("not a directory")
    assert main([str(ft4), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"tablegen: output {str(out)!r}: exists and is not a directory; expected a directory (new or " \
                  "existing) for one file per switch\n"
    assert out.read_text() == "not a directory"


@pytest.mark.parametrize(("smac", "msg"), [
    ("zz", "tablegen: e0_0: port_mac set_smac smac='zz': expected a MAC aa:bb:cc:dd:ee:ff"),
    (7, "tablegen: e0_0: port_mac set_smac smac=7: expected a MAC aa:bb:cc:dd:ee:ff"),
])
def test_check_refuses_a_malformed_smac(ft4, tmp_path, capsys, smac, msg):
    out = tmp_path / "ecmp"
    assert main([str(ft4), "-o", str(out)]) == 0
    doc = json.loads((out / "e0_0.json").read_text())
    next(e for e in doc["table_entries"] if e["table"] == "port_mac")["params"]["smac"] = smac
    (out / "e0_0.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["check", str(out), str(ft4)]) == 2
    assert capsys.readouterr().err == msg + "\n"


def test_check_reports_an_smac_that_is_not_the_ports(ft4, tmp_path, capsys):
    out = tmp_path / "ecmp"
    assert main([str(ft4), "-o", str(out)]) == 0
    doc = json.loads((out / "e0_0.json").read_text())
    entry = next(e for e in doc["table_entries"] if e["table"] == "port_mac" and e["match"]["egress_port"] == 3)
    entry["params"]["smac"] = "02:00:00:01:00:09"
    (out / "e0_0.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["check", str(out), str(ft4)]) == 1
    assert "e0_0: port_mac egress_port=3 smac=02:00:00:01:00:09: expected the topology's 02:00:00:01:00:03" \
        in capsys.readouterr().out
