"""moto's S3 server on loopback, for the S3 tests: ``python -m tests.support.s3_server [--ignore-if-none-match]``
prints ``port <n>`` and serves until killed or until its stdin closes.

Requests are handled one at a time. moto honours ``PutObject`` with ``If-None-Match: *`` (412 when
the key exists) but checks and stores in two steps without a lock, so under a threaded server two
racing puts could in principle both pass the check; serving one request at a time makes the
conditional put atomic by construction, as S3's is.

``--ignore-if-none-match`` drops the header before moto sees it: a stand-in for an S3-compatible
server without conditional writes, on which commits must be refused.
"""

from __future__ import annotations

import os
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server


def app(ignore_if_none_match: bool):
    inner = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def serve(environ, start_response):
        if ignore_if_none_match and environ.get("REQUEST_METHOD") == "PUT":
            environ.pop("HTTP_IF_NONE_MATCH", None)
        with lock:
            return [b"".join(inner(environ, start_response))]
    return serve


def main(argv: list[str]) -> None:
    server = make_server("127.0.0.1", 0, app("--ignore-if-none-match" in argv), threaded=True)
    print(f"port {server.server_address[1]}", flush=True)
    # exit with the test process: its end (even a kill) closes our stdin
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
