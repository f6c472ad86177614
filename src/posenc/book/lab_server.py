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

from pathlib import Path

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

__all__ = [
    "NoDelayConnection",
    "SERVER_OPTION",
    "LAB_EXTENSIONS",
    "EXTENSION_OPTION",
    "LAB_SETTINGS",
    "SETTINGS_OPTION",
]

#: The folder holding the book's own JupyterLab extension, built (``posenc-jupyterlab``, source in
#: ``lab_extension/``). With it solutions stay folded after Run All and a save, numbers appear
#: whatever the timing, and links between chapters open them. ``pip install`` puts it where
#: JupyterLab finds it (``share/jupyter/labextensions``); an editable install does not, so
#: ``make lab`` names the folder.
LAB_EXTENSIONS = Path(__file__).with_name("labextensions")
#: The option that makes ``jupyter lab`` load it from the package's folder.
EXTENSION_OPTION = f"--LabServerApp.extra_labextensions_path={LAB_EXTENSIONS}"
#: The book's folder of JupyterLab settings. Its ``overrides.d/posenc-jupyterlab.json`` makes
#: notebook windowing "none" by default (every cell in the page, so Run All reaches no cell
#: JupyterLab has not drawn and a link scrolls to any cell; a reader may still choose another mode
#: in Settings). A pip install puts the file in ``share/jupyter/lab/settings/overrides.d``;
#: ``make lab`` names the folder.
LAB_SETTINGS = Path(__file__).with_name("lab_settings")
#: The option that makes ``jupyter lab`` read it.
SETTINGS_OPTION = f"--LabServerApp.app_settings_dir={LAB_SETTINGS}"

#: The command-line option that makes ``jupyter lab`` (or ``jupyter notebook``) use it.
SERVER_OPTION = "--ServerApp.kernel_websocket_connection_class=posenc.book.lab_server.NoDelayConnection"


class NoDelayConnection(ZMQChannelsWebsocketConnection):
    """jupyter_server's kernel websocket connection, with ``TCP_NODELAY`` on its socket."""

    def connect(self):
        self.websocket_handler.set_nodelay(True)
        return super().connect()
