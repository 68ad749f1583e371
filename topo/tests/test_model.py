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


def _ucd4_dict():
    return json.loads(dumps(ucd4()))


@pytest.mark.parametrize(("edit", "msg"), [
    (lambda d: d.update(format=2), r"topology\.format=2: expected 1"),
    (lambda d: d.update(format="1"), r"topology\.format='1': expected 1"),
    (lambda d: d["links"][0].update(rate_mbit="fast"), r"links\[0\]\.rate_mbit='fast': expected a number"),
    (lambda d: d["links"][1].update(rate_mbit=True), r"links\[1\]\.rate_mbit=True: expected a number"),
    (lambda d: d["links"][0].update(delay=5), r"links\[0\]\.delay=5: expected str"),
    (lambda d: d["ocs"][0].update(rate_mbit="fast"), r"ocs\[0\]\.rate_mbit='fast': expected a number"),
    (lambda d: d["ocs"][0].update(default_map=3), r"ocs\[0\]\.default_map=3: expected str"),
    (lambda d: d.update(params=[1]), r"topology\.params=\[1\]: expected dict"),
])
def test_bad_fields_are_named(edit, msg):
    d = _ucd4_dict()
    edit(d)
    with pytest.raises(ValueError, match=msg) as exc:
        from_dict(d)
    assert "\n" not in str(exc.value)


def test_format_may_be_left_out():
    d = _ucd4_dict()
    del d["format"]
    assert from_dict(d).name == "ucd4"


@pytest.mark.parametrize("constant", ["Infinity", "-Infinity", "NaN"])
def test_non_standard_json_numbers_are_refused(tmp_path, constant):
    p = tmp_path / "t.json"
    p.write_text(dumps(ucd4()).replace('"rate_mbit": 1000.0, "delay"', f'"rate_mbit": {constant}, "delay"', 1))
    with pytest.raises(ValueError, match=rf"t\.json': {constant} is not JSON; expected a finite number"):
        load(p)


def test_never_writes_non_standard_json():
    t = ucd4()
    t.params["rate_mbit"] = float("inf")
    with pytest.raises(ValueError, match="JSON"):
        dumps(t)
