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


def test_switch_grpc_port_outside_1_65535_is_one_line(capsys) -> None:
    for addr in ("127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1:65536"):
        assert switch_cli.main(["--no-p4", "--grpc-server-addr", addr]) == 1
        err = capsys.readouterr().err
        assert err == f"p4sim-switch: gRPC address {addr!r}: expected IP:PORT with PORT 1..65535, e.g. 127.0.0.1:9559\n"
    assert switch_cli.parse_addr("[::1]:9559") == ("::1", 9559)
