import pytest

from p4rt.schema import P4Schema
from p4rt.tests.p4info_sample import P4INFO


def test_suffix_resolution(schema):
    assert schema.tables["route"].preamble.name == "FabricIngress.route"
    assert schema.tables["FabricIngress.route"].preamble.id == 1001
    assert schema.tables[1002].preamble.name == "FabricIngress.path"
    assert schema.tables["a.fwd"].preamble.id == 1007
    assert schema.actions["set_path"].preamble.id == 2001
    assert schema.action_profiles["ecmp_selector"].with_selector
    assert schema.counters["port_rx"].size == 512
    assert schema.direct_counters["path_counter"].direct_table_id == 1002
    assert schema.meters["rate"].size == 8
    assert schema.registers["spray_rr"].size == 1024
    assert schema.digests["learn_t"].preamble.id == 8001
    assert [m.name for m in schema.packet_metadata["packet_in"].metadata] == ["ingress_port", "_pad"]


def test_ambiguous_and_unknown_names_list_candidates(schema):
    with pytest.raises(ValueError, match=r"ambiguous table 'fwd'.*FabricEgress.b.fwd.*FabricIngress.a.fwd"):
        schema.tables["fwd"]
    with pytest.raises(ValueError, match=r"unknown table 'nope'.*FabricIngress.route"):
        schema.tables["nope"]
    with pytest.raises(ValueError, match="unknown table id 9"):
        schema.tables[9]
    # "ute" is a string suffix but not a name component
    with pytest.raises(ValueError, match="unknown"):
        schema.tables["ute"]


def test_fields_params_and_helpers(schema):
    acl = schema.tables["acl"]
    assert schema.match_field(acl, "ingress_port").bitwidth == 9
    assert schema.needs_priority(acl) and not schema.needs_priority(schema.tables["route"])
    fwd = schema.tables["a.fwd"]
    assert schema.match_field(fwd, "dst_addr").id == 1
    with pytest.raises(ValueError, match="unknown match field"):
        schema.match_field(acl, "vlan")
    to_host = schema.actions["to_host"]
    assert schema.param(to_host, "dmac").bitwidth == 48
    assert schema.table_profile(schema.tables["ecmp_group"]).preamble.name == "FabricIngress.ecmp_selector"
    assert schema.direct_counter_of(schema.tables["path"]).preamble.name == "FabricIngress.path_counter"
    with pytest.raises(ValueError, match="action of table"):
        schema.table_action(schema.tables["route"], "set_smac")


def test_load_text_and_binary(tmp_path, schema):
    txt = tmp_path / "p.p4info.txtpb"
    txt.write_text(P4INFO)
    binf = tmp_path / "p.p4info.bin"
    binf.write_bytes(schema.p4info.SerializeToString())
    assert P4Schema.load(txt).p4info == schema.p4info
    assert P4Schema.load(binf).p4info == schema.p4info
    with pytest.raises(ValueError, match="P4Info text"):
        P4Schema.from_text("tables { bogus: 1 }")
