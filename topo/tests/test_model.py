"""Model and JSON codec: round trip, MAC scheme, load errors."""

import json

import pytest

from topo.generators import fattree, hybrid, leafspine, ucd4
from topo.model import dumps, from_dict, host_mac, load, save, switch_mac, to_dict


@pytest.mark.parametrize("make", [lambda: fattree(4), lambda: leafspine(3, 2, 2), ucd4,
                                  lambda: hybrid(leafspine(4, 2, 2))])
def test_round_trip(make, tmp_path):
    t = make()
    path = tmp_path / "t.json"
    save(t, path)
    back = load(path)
    assert to_dict(back) == to_dict(t)
    assert dumps(back) == path.read_text()
    data = json.loads(path.read_text())
    assert set(data) >= {"switches", "hosts", "links", "ocs"}


def test_macs():
    assert switch_mac(1, 3) == "02:00:00:01:00:03"
    assert switch_mac(0x1234, 255) == "02:00:12:34:00:ff"
    assert host_mac("10.0.0.2/24") == "00:00:0a:00:00:02"
    with pytest.raises(ValueError, match="device_id=0"):
        switch_mac(0, 1)


def test_load_errors(tmp_path):
    with pytest.raises(ValueError, match="missing.json"):
        load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        load(bad)
    with pytest.raises(ValueError, match=r"topology: missing field 'links'"):
        from_dict({"switches": [], "hosts": []})
    d = to_dict(ucd4())
    d["switches"][0]["device_id"] = "1"
    with pytest.raises(ValueError, match=r"switches\[0\]\.device_id='1': expected int"):
        from_dict(d)
    d = to_dict(ucd4())
    d["ocs"][0]["circuit_maps"]["x"] = [[1, 2, 3]]
    with pytest.raises(ValueError, match="circuit_maps.x circuit"):
        from_dict(d)


def test_attachments():
    att = fattree(4).attachments()
    assert len(att) == 16
    assert att["h1_0_1"] == ("e1_0", 2, "02:00:00:03:00:02")
    assert ucd4().attachments()["h3"] == ("s3", 1, "02:00:00:03:00:01")
