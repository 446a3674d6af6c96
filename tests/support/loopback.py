"""The lifecycle the fake services share: serve on 127.0.0.1 in a daemon thread, stop at once.

A subclass builds its HTTP server in `_make_server` and keeps `host`, `_requested_port` (0: a
free port), `_stopping` (set while stopping, so handlers cut their sleeps short), `_httpd` and
`_thread`. It is a context manager: started on entry unless already running, stopped on exit.
"""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    name = "fake server"
    host: str
    _requested_port: int
    _stopping: threading.Event
    _httpd: ThreadingHTTPServer | None
    _thread: threading.Thread | None

    def _make_server(self) -> ThreadingHTTPServer:
        raise NotImplementedError

    def start(self) -> Self:
        """Serve in a daemon thread."""
        if self._httpd is not None:
            raise RuntimeError(f"{self.name} is already running")
        self._stopping.clear()
        self._httpd = self._make_server()
        # A short poll interval keeps stop() quick.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=self.name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests that are hanging or waiting out latency are dropped at once."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Self:
        return self if self._httpd is not None else self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
