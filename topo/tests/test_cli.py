"""python -m topo: generate, show, draw, and one-line errors."""

import json

import pytest

from topo.__main__ import main
from topo.model import load


def test_generate_show_draw(tmp_path, capsys):
    out = tmp_path / "ft.json"
    assert main(["generate", "fattree", "--k", "4", "-o", str(out)]) == 0
    t = load(out)
    assert len(t.switches) == 20 and t.links[0].rate_mbit == 20.0
    assert main(["show", str(out)]) == 0
    text = capsys.readouterr().out
    assert "switches: 20 (edge 8, aggregation 8, core 4)" in text
    assert "shortest paths h0_0_0 -> h3_1_1: 4" in text
    png = tmp_path / "ft.png"
    assert main(["draw", str(out), "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20000


def test_generate_others(tmp_path, capsys):
    assert main(["generate", "leafspine", "--leaves", "4", "--spines", "2", "--hosts-per-leaf", "3",
                 "--hybrid", "--rate", "100", "-o", str(tmp_path / "ls.json")]) == 0
    t = load(tmp_path / "ls.json")
    assert len(t.hosts) == 12 and len(t.ocs[0].ports) == 4 and t.links[0].rate_mbit == 100.0
    capsys.readouterr()
    assert main(["generate", "ucd4"]) == 0
    assert json.loads(capsys.readouterr().out)["ocs"][0]["default_map"] == "initial"
    assert main(["generate", "fattree", "--k", "4", "--hybrid", "--hybrid-tors", "e0_0,e1_0",
                 "-o", str(tmp_path / "h.json")]) == 0
    assert main(["show", str(tmp_path / "h.json")]) == 0
    assert "map pairs (default): 1-2" in capsys.readouterr().out


@pytest.mark.parametrize("argv,msg", [
    (["generate", "fattree", "--k", "5"], "topo: k=5: expected an even integer >= 4"),
    (["generate", "ucd4", "--hybrid"], "topo: --hybrid: ucd4 already has its OCS"),
    (["show", "/nonexistent.json"], "topo: topology file '/nonexistent.json'"),
])
def test_errors_are_one_line(argv, msg, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(msg) and err.count("\n") == 1


def test_show_rejects_invalid(tmp_path, capsys):
    out = tmp_path / "t.json"
    main(["generate", "fattree", "--k", "4", "-o", str(out)])
    d = json.loads(out.read_text())
    d["links"].append({"a": "x", "a_port": 1, "b": "e0_0", "b_port": 1})
    out.write_text(json.dumps(d))
    capsys.readouterr()
    assert main(["show", str(out)]) == 2
    assert "unknown node 'x'" in capsys.readouterr().err


@pytest.mark.parametrize(("rate", "shown"), [("inf", "inf"), ("1e-9", "1e-09"), ("2000", "2000.0"), ("nan", "nan")])
def test_generate_refuses_rates_mininet_cannot_shape(rate, shown, tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["generate", "ucd4", "--rate", rate, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"rate_mbit={shown}: expected 0.001..1000 Mbit/s" in err and err.count("\n") == 1
    assert not out.exists()  # nothing written, so never a non-standard `Infinity`


def test_show_names_a_field_that_is_not_a_number(tmp_path, capsys):
    out = tmp_path / "t.json"
    main(["generate", "ucd4", "-o", str(out)])
    d = json.loads(out.read_text())
    d["links"][2]["rate_mbit"] = "fast"
    out.write_text(json.dumps(d))
    capsys.readouterr()
    assert main(["show", str(out)]) == 2
    assert capsys.readouterr().err == "topo: links[2].rate_mbit='fast': expected a number\n"
