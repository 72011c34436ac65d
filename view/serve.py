"""`hallubench view --serve`: the built site over HTTP on 127.0.0.1 (the site needs no server; this is for
convenience, e.g. on a remote machine through an SSH tunnel)."""
from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from hallubench.errors import ConfigError


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # one line per request would bury the address printed above
        pass


def make_server(site: Path, port: int = 8000) -> ThreadingHTTPServer:
    """A server of the folder `site` on 127.0.0.1:`port` (0: a free port), not yet serving."""
    return ThreadingHTTPServer(("127.0.0.1", port), functools.partial(_QuietHandler, directory=str(site)))


def serve(site: Path, port: int = 8000) -> None:
    """Serve `site` on http://127.0.0.1:`port`/ until interrupted (Ctrl-C); ConfigError when the port cannot be
    had (e.g. taken)."""
    try:
        server = make_server(site, port)
    except OSError as err:
        raise ConfigError(f"cannot serve on 127.0.0.1:{port} ({err}); pass --port with a free one (0 picks one), "
                          "or open the site from disk") from None
    with server:
        print(f"serving {site} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
