import socket
import threading
import time

from scripts.hosts.flows import fetch, serve


def test_fetch_connects_at_the_time_it_is_given():
    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sent: list[int] = []
    server = threading.Thread(target=lambda: sent.append(serve(port, 20000)), daemon=True)
    server.start()
    at = time.time() + 0.3
    got = None
    for _ in range(50):  # until the server listens
        try:
            got = fetch("127.0.0.1", port, timeout=5, at=at)
            break
        except ConnectionRefusedError:
            time.sleep(0.02)
    server.join(5)
    assert got is not None and got["bytes"] == 20000 and sent == [20000]
    assert got["t_start"] >= at  # not before the common start (the clients of a run start together)
