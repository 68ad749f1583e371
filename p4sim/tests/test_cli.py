"""The console scripts exist and take the command shapes of p4c-bm2-ss and simple_switch_grpc."""

from p4sim.compiler import cli as compile_cli
from p4sim.switch import cli as switch_cli


def test_compile_command_shape() -> None:
    args = compile_cli.build_parser().parse_args(
        ["prog.p4", "-o", "prog.json", "--p4runtime-files", "prog.p4info.txtpb", "-I", "inc", "-D", "X=1"]
    )
    assert (args.program, args.output, args.p4runtime_files, args.include, args.define) == (
        "prog.p4", "prog.json", "prog.p4info.txtpb", ["inc"], ["X=1"])


def test_switch_command_shape() -> None:
    args = switch_cli.build_parser().parse_args(
        ["-i", "1@veth1", "--device-id", "3", "prog.json", "--grpc-server-addr", "127.0.0.1:50001"])
    assert (args.interface, args.device_id, args.json, args.grpc_server_addr) == (
        ["1@veth1"], 3, "prog.json", "127.0.0.1:50001")
