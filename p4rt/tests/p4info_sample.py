"""A small P4Info (protobuf text) shaped like the fabric program, for unit tests."""

P4INFO = r'''
pkg_info { arch: "v1model" }
tables {
  preamble { id: 1001 name: "FabricIngress.route" alias: "route" }
  match_fields { id: 1 name: "ipv4_dst" bitwidth: 32 match_type: LPM }
  action_refs { id: 2001 }
  action_refs { id: 2002 }
  action_refs { id: 2003 }
  size: 1024
}
tables {
  preamble { id: 1002 name: "FabricIngress.path" alias: "path" }
  match_fields { id: 1 name: "path_id" bitwidth: 16 match_type: EXACT }
  match_fields { id: 2 name: "version" bitwidth: 1 match_type: EXACT }
  action_refs { id: 2004 }
  action_refs { id: 2005 }
  direct_resource_ids: 5001
  size: 1024
}
tables {
  preamble { id: 1003 name: "FabricIngress.acl" alias: "acl" }
  match_fields { id: 1 name: "ipv4_src" bitwidth: 32 match_type: TERNARY }
  match_fields { id: 2 name: "ipv4_dst" bitwidth: 32 match_type: TERNARY }
  match_fields { id: 3 name: "ingress_port" bitwidth: 9 match_type: OPTIONAL }
  match_fields { id: 4 name: "l4_dport" bitwidth: 16 match_type: RANGE }
  action_refs { id: 2006 }
  action_refs { id: 2007 }
  size: 256
}
tables {
  preamble { id: 1004 name: "FabricIngress.ecmp_group" alias: "ecmp_group" }
  match_fields { id: 1 name: "path_id" bitwidth: 16 match_type: EXACT }
  match_fields { id: 2 name: "version" bitwidth: 1 match_type: EXACT }
  action_refs { id: 2008 }
  implementation_id: 3001
  size: 1024
}
tables {
  preamble { id: 1005 name: "FabricIngress.path_version" alias: "path_version" }
  match_fields { id: 1 name: "path_id" bitwidth: 16 match_type: EXACT }
  action_refs { id: 2009 }
  size: 1024
}
tables {
  preamble { id: 1006 name: "FabricEgress.port_mac" alias: "port_mac" }
  match_fields { id: 1 name: "egress_port" bitwidth: 9 match_type: EXACT }
  action_refs { id: 2010 }
  size: 512
}
tables {
  preamble { id: 1007 name: "FabricIngress.a.fwd" alias: "a.fwd" }
  match_fields { id: 1 name: "hdr.ethernet.dst_addr" bitwidth: 48 match_type: EXACT }
  action_refs { id: 2003 }
  size: 16
}
tables {
  preamble { id: 1008 name: "FabricEgress.b.fwd" alias: "b.fwd" }
  match_fields { id: 1 name: "hdr.ethernet.dst_addr" bitwidth: 48 match_type: EXACT }
  action_refs { id: 2003 }
  size: 16
}
actions { preamble { id: 2001 name: "FabricIngress.set_path" alias: "set_path" }
  params { id: 1 name: "path_id" bitwidth: 16 } }
actions { preamble { id: 2002 name: "FabricIngress.to_host" alias: "to_host" }
  params { id: 1 name: "port" bitwidth: 9 } params { id: 2 name: "dmac" bitwidth: 48 } }
actions { preamble { id: 2003 name: "FabricIngress.route_drop" alias: "route_drop" } }
actions { preamble { id: 2004 name: "FabricIngress.path_static" alias: "path_static" }
  params { id: 1 name: "port" bitwidth: 9 } params { id: 2 name: "dmac" bitwidth: 48 } }
actions { preamble { id: 2005 name: "FabricIngress.path_ecmp" alias: "path_ecmp" } }
actions { preamble { id: 2006 name: "FabricIngress.acl_forward" alias: "acl_forward" }
  params { id: 1 name: "port" bitwidth: 9 } }
actions { preamble { id: 2007 name: "FabricIngress.acl_drop" alias: "acl_drop" } }
actions { preamble { id: 2008 name: "FabricIngress.set_next_hop" alias: "set_next_hop" }
  params { id: 1 name: "port" bitwidth: 9 } params { id: 2 name: "dmac" bitwidth: 48 } }
actions { preamble { id: 2009 name: "FabricIngress.set_version" alias: "set_version" }
  params { id: 1 name: "version" bitwidth: 1 } }
actions { preamble { id: 2010 name: "FabricEgress.set_smac" alias: "set_smac" }
  params { id: 1 name: "smac" bitwidth: 48 } }
action_profiles {
  preamble { id: 3001 name: "FabricIngress.ecmp_selector" alias: "ecmp_selector" }
  table_ids: 1004 with_selector: true size: 1024 max_group_size: 16
}
counters { preamble { id: 4001 name: "FabricIngress.port_rx" alias: "port_rx" }
  spec { unit: BOTH } size: 512 }
counters { preamble { id: 4002 name: "FabricEgress.port_tx" alias: "port_tx" }
  spec { unit: BOTH } size: 512 }
direct_counters { preamble { id: 5001 name: "FabricIngress.path_counter" alias: "path_counter" }
  spec { unit: BOTH } direct_table_id: 1002 }
meters { preamble { id: 6001 name: "FabricIngress.rate" alias: "rate" } spec { unit: BYTES } size: 8 }
registers { preamble { id: 7001 name: "FabricIngress.spray_rr" alias: "spray_rr" }
  type_spec { bitstring { bit { bitwidth: 16 } } } size: 1024 }
digests { preamble { id: 8001 name: "learn_t" alias: "learn_t" }
  type_spec { struct { name: "learn_t" } } }
controller_packet_metadata {
  preamble { id: 9001 name: "packet_in" alias: "packet_in" annotations: "@controller_header(\"packet_in\")" }
  metadata { id: 1 name: "ingress_port" bitwidth: 9 }
  metadata { id: 2 name: "_pad" bitwidth: 7 }
}
controller_packet_metadata {
  preamble { id: 9002 name: "packet_out" alias: "packet_out" annotations: "@controller_header(\"packet_out\")" }
  metadata { id: 1 name: "egress_port" bitwidth: 9 }
  metadata { id: 2 name: "_pad" bitwidth: 7 }
}
'''
