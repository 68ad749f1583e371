"""p4runtime-shell in its own environment (.venv-p4rt-shell: protobuf 3.20, p4runtime's original modules),
driven by a test through a pipe: p4sim/tests/programs.py ShellProcess starts it.

One JSON request a line on stdin, one JSON reply a line on stdout:
    {"exec": CODE}   run statements with the module `sh` (p4runtime_sh.shell) in scope; reply {"value": "None"}
    {"eval": EXPR}   reply {"value": repr(value)} (plain values: the test reads them with ast.literal_eval)
    {"reset": true}  forget every name but `sh` (a new session)
An exception becomes {"error": "Type: message"}. Names persist between requests. Standard library and
p4runtime-shell only: this file runs with that environment's Python, without the project.
"""

from __future__ import annotations

import json
import sys

import p4runtime_sh.shell as sh


def main() -> int:
    """Serve requests until stdin closes."""
    replies = sys.stdout
    sys.stdout = sys.stderr  # what the shell prints must not mix with the replies
    namespace: dict = {"sh": sh}
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req.get("reset"):
                namespace = {"sh": sh}
                reply = {"value": "None"}
            elif "exec" in req:
                exec(req["exec"], namespace)  # the test's own code: the point of this driver
                reply = {"value": "None"}
            else:
                reply = {"value": repr(eval(req["eval"], namespace))}
        except Exception as exc:  # reported to the test, which raises it there
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
