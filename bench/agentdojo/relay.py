"""The MCP server mecha starts for an AgentDojo suite: a relay.

mecha starts this as the stdio MCP server of [mcp.servers.SUITE] (see
mecha.toml). Importing agentdojo takes seconds of CPU, too much to pay for
each of thousands of cases, so while a bench run is going the suite is
served by the run's own process (dojo.py, which holds the case's
environment) over a Unix socket named by $DOJO_SOCKET: this script only
carries bytes between mecha's pipes and that socket. It imports nothing but
the standard library (run with python -I -S it starts in milliseconds).

Without $DOJO_SOCKET (a session replayed or rerun after the bench
finished) it runs dojo.py's own stdio server in this process: slow, but the
same tools, on the environment of the case file $DOJO_CASE names (the run's
cases/ID.json) or else on the suite's environment without injections.
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
        case = ["--case", os.environ["DOJO_CASE"]] if os.environ.get("DOJO_CASE") else []
        os.execv(python, [python, os.path.join(here, "dojo.py"), "serve", *args, *case])
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
