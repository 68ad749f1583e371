// Control types of the fabric program: the apply signatures of the controls that other controls are
// given as constructor arguments (P4_16 control types). A control given an instance applies the
// caller's: its tables, actions, counters and registers keep the caller's P4 names
// (FabricIngress.acl.acl), so a top file declares every instance the controller sees and hands them
// to the controls that apply them in the target's order (Dispatch, and include/<target>/'s controls).
// The OCS's and the clock's are beside them (include/ocs/dispatch.p4, include/schedule/clock.p4).
#ifndef P4SRC_INCLUDE_FABRIC_CONTROL_TYPES_P4_
#define P4SRC_INCLUDE_FABRIC_CONTROL_TYPES_P4_

#include "../headers.p4"
#include "../metadata.p4"

// Acl, Routing, Flowlet, PathSelect, Failover, SlotRoute, EgressRewrite.
control FabricControl(inout fabric_headers_t hdr, inout fabric_metadata_t meta);

// SlotHold (v1model).
control FabricMetaControl(inout fabric_metadata_t meta);

#endif  // P4SRC_INCLUDE_FABRIC_CONTROL_TYPES_P4_
