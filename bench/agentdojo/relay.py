"""The MCP server mecha starts for an AgentDojo suite: a relay.

mecha starts this as the stdio MCP server of [mcp.servers.SUITE] (see
mecha.toml). Importing agentdojo takes seconds of CPU, too much to pay for
each of thousands of cases, so while a bench run is going the suite is
served by the run's own process (dojo.py, which holds the case's
environment) over a Unix socket named by $DOJO_SOCKET: this script only
carries bytes between mecha's pipes and that socket. It imports nothing but
the standard library (run with python -I -S it starts in milliseconds).

Without $DOJO_SOCKET (a session rerun after the bench finished) it runs
dojo.py's own stdio server for the case file given, in this process:
slow, but the same environment and tools.
"""

import os
import socket
import sys
import threading


def main() -> None:
    args = sys.argv[1:]
    path = os.environ.get("DOJO_SOCKET", "")
    if not path or not os.path.exists(path):
        here = os.path.dirname(os.path.abspath(__file__))
        python = os.environ.get("DOJO_PYTHON") or sys.executable
        os.execv(python, [python, os.path.join(here, "dojo.py"), "serve", *args])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    # The first line says which suite and case mecha started us for.
    sock.sendall((" ".join(args) + "\n").encode())

    def upstream() -> None:
        fd = sys.stdin.fileno()
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            sock.sendall(data)
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    threading.Thread(target=upstream, daemon=True).start()
    out = sys.stdout.fileno()
    while True:
        data = sock.recv(65536)
        if not data:
            break
        while data:
            n = os.write(out, data)
            data = data[n:]


if __name__ == "__main__":
    main()
