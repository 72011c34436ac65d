"""`hallubench view --serve`: the built site over HTTP on 127.0.0.1 (the site needs no server; this is for
convenience, e.g. on a remote machine through an SSH tunnel)."""
from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # one line per request would bury the address printed above
        pass


def make_server(site: Path, port: int = 8000) -> ThreadingHTTPServer:
    """A server of the folder `site` on 127.0.0.1:`port` (0: a free port), not yet serving."""
    return ThreadingHTTPServer(("127.0.0.1", port), functools.partial(_QuietHandler, directory=str(site)))


def serve(site: Path, port: int = 8000) -> None:
    """Serve `site` on http://127.0.0.1:`port`/ until interrupted (Ctrl-C)."""
    with make_server(site, port) as server:
        print(f"serving {site} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
