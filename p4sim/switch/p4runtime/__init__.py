"""P4Runtime gRPC server of the p4sim switch (the role PI plays for simple_switch_grpc)."""
