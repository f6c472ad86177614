"""Run the package's commands (``python -m posenc.lab ...``) as processes of their own, forked from
one that has imported what they import.

A command-line test needs what a shell gives a command: a process of its own, its exit status, its
standard output and error, its working folder and environment. Starting Python and importing torch
took 2-4 s of each lab command's 5 (issue 42). So each test worker starts one *zygote*
(``python forked_commands.py MODULE...``), which imports the modules named once and then, for each
call, forks a child that runs the command as ``python -m`` runs it: the module's code in a fresh
``__main__`` namespace with ``sys.argv[0]`` its file (``runpy.run_module(name, run_name="__main__",
alter_sys=True)``; CPython's ``-m`` calls ``runpy._run_module_as_main``, which does the same in the
interpreter's own, empty ``__main__``), with the call's arguments, folder and environment, its file
descriptors 0-2 on /dev/null and two files, and the interpreter's exit rules (``SystemExit``'s code;
an uncaught exception prints its traceback and exits 1; exit handlers run).

What only a fresh interpreter shows is not what these tests check: the time it takes to start, a
command that works only because something else imported a module first, and a setting read from the
environment when a module is imported (the zygote's environment, not the call's: the commands tested
this way read theirs when they run). Fresh interpreters run the commands' own start-up tests
(test_commands.py, test_student.py, test_explain.py), and test_lab.py and test_course_grade.py keep a
real ``python -m`` call of ``run``, ``sweep``, ``summary``, ``merge`` and ``grade``.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

# what the zygote imports before it forks: the lab's and the course's commands, and torch's compiler
# module (its optimisers import it on first use, 2 s)
PRELOAD = ("posenc.lab.__main__", "posenc.course.__main__", "torch._dynamo", "torch.optim")


def _child(request: dict) -> None:
    """In the forked child: become the command and exit with its status (never returns)."""
    import runpy
    import traceback

    code = 1
    try:
        os.chdir(request["cwd"])
        sys.path[0] = os.getcwd()  # as `python -m` starts: the working folder first (here: the zygote's folder)
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, (path, flags) in enumerate(
            [(os.devnull, os.O_RDONLY), (request["stdout"], os.O_WRONLY), (request["stderr"], os.O_WRONLY)]
        ):
            opened = os.open(path, flags)
            os.dup2(opened, fd)
            os.close(opened)
        sys.argv = [request["module"], *request["args"]]
        try:
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as stop:  # the interpreter's rules for sys.exit(code)
            if stop.code is None:
                code = 0
            elif isinstance(stop.code, int):
                code = stop.code
            else:
                print(stop.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code & 0xFF)


def serve(modules: list[str]) -> None:
    """The zygote: import ``modules``, then read one JSON request a line from stdin, fork a child for it,
    answer ``{"pid": ...}`` at once and ``{"status": ...}`` when the child ends."""
    import importlib

    for name in modules:
        importlib.import_module(name)
    for name in [n for n in sys.modules if n.endswith(".__main__")]:
        del sys.modules[name]  # run afresh as __main__, as `python -m` does (and runpy warns otherwise)
    # a fork copies only the calling thread: forking is safe only while there is no other
    assert threading.active_count() == 1, threading.enumerate()
    answer = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
        answer.write(json.dumps({"pid": pid}) + "\n")
        answer.flush()
        _, wait_status = os.waitpid(pid, 0)
        answer.write(json.dumps({"status": os.waitstatus_to_exitcode(wait_status)}) + "\n")
        answer.flush()


_ZYGOTE: subprocess.Popen | None = None


def _zygote() -> subprocess.Popen:
    global _ZYGOTE
    if _ZYGOTE is None or _ZYGOTE.poll() is not None:
        _ZYGOTE = subprocess.Popen(
            [sys.executable, __file__, *PRELOAD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).parent,
        )
        atexit.register(_ZYGOTE.kill)
    return _ZYGOTE


def _read_answer(zygote: subprocess.Popen, deadline_s: float | None) -> dict:
    ready, _, _ = select.select([zygote.stdout], [], [], deadline_s)
    if not ready:
        raise TimeoutError
    line = zygote.stdout.readline()
    if not line:
        raise RuntimeError("the command zygote ended")
    return json.loads(line)


def run_command(module: str, *args, cwd: Path | str | None = None, timeout: float = 600, env: dict | None = None):
    """``python -m module *args`` in ``cwd``, as ``subprocess.run(..., capture_output=True, text=True,
    timeout=timeout)`` would run it (``cwd``: this process's folder unless given; ``env``: its
    environment unless given): returns a CompletedProcess (args, returncode, stdout, stderr);
    raises subprocess.TimeoutExpired (the command killed) after ``timeout`` seconds."""
    args = [str(a) for a in args]
    command = [sys.executable, "-m", module, *args]
    zygote = _zygote()
    with tempfile.TemporaryDirectory() as folder:
        out, err = Path(folder, "stdout"), Path(folder, "stderr")
        out.touch()
        err.touch()
        request = {
            "module": module,
            "args": args,
            "cwd": str(os.getcwd() if cwd is None else cwd),
            "env": dict(os.environ if env is None else env),
            "stdout": str(out),
            "stderr": str(err),
        }
        zygote.stdin.write(json.dumps(request) + "\n")
        zygote.stdin.flush()
        pid = _read_answer(zygote, 60)["pid"]
        try:
            status = _read_answer(zygote, timeout)["status"]
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            _read_answer(zygote, 60)
            raise subprocess.TimeoutExpired(command, timeout) from None
        return subprocess.CompletedProcess(command, status, out.read_text(), err.read_text())


if __name__ == "__main__":
    serve(sys.argv[1:])
