"""Quick widgets in a local JupyterLab: the kernel's websocket without Nagle's algorithm.

jupyter_server (2.x) leaves Nagle's algorithm on for the kernel's websocket. A widget's answer is
several small frames in a row (the kernel busy, the new state, the kernel idle); with Nagle's
algorithm each frame after the first waits for the browser to acknowledge the one before, and
browsers delay acknowledgements (40 ms on Linux), so a slider's round trip took 20 ms or 60 ms at
random, measured on loopback (benchmarks/bench_jupyterlab.py). :class:`NoDelayConnection` sets
``TCP_NODELAY`` on the websocket when it connects (tornado's ``WebSocketHandler.set_nodelay``);
``make lab`` starts JupyterLab with it::

    jupyter lab --ServerApp.kernel_websocket_connection_class=posenc.book.lab_server.NoDelayConnection
"""

from __future__ import annotations

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

__all__ = ["NoDelayConnection", "SERVER_OPTION"]

#: The command-line option that makes ``jupyter lab`` (or ``jupyter notebook``) use it.
SERVER_OPTION = "--ServerApp.kernel_websocket_connection_class=posenc.book.lab_server.NoDelayConnection"


class NoDelayConnection(ZMQChannelsWebsocketConnection):
    """jupyter_server's kernel websocket connection, with ``TCP_NODELAY`` on its socket."""

    def connect(self):
        self.websocket_handler.set_nodelay(True)
        return super().connect()
