"""p4sim: the embedded P4 target (a p4c-shaped compiler and a simple_switch_grpc-shaped switch)."""

from importlib import metadata


def package_version() -> str:
    """The installed project's version (what `--version` of both commands prints)."""
    try:
        return metadata.version("hitless")
    except metadata.PackageNotFoundError:
        return "0+unknown"
