"""The process that runs a student's functions for the sealed grader: no posenc, no answers.

Started by :mod:`posenc.course.sealed` as ``python -I -S sandbox_child.py READ_FD WRITE_FD FLAG_FD``
(isolated, no site: no ``.pth`` file runs, so an editable posenc is not on its path). It imports
nothing of posenc; it loads :mod:`posenc.course.wire` by its file path. In order:

1. it reads its setup from the grader (the import path, the student's code extracted from the
   notebook, the function's name, the helpers the exercise allows, the folders it must not read);
2. it imports NumPy (and torch, and the modules the student's code imports) and puts a stand-in
   ``posenc`` in ``sys.modules``: the allowed helpers are computed by the grader on request, every
   other name fails when called (it is switched off, as in the student's self-check);
3. it restricts itself with Landlock where the kernel has it (:func:`_landlock`: read only Python's and
   the system's files and its own folder, write nothing, run no program, no TCP, no signals or ptrace
   outside), then installs an audit hook (PEP 578), which nothing can remove, that refuses what
   could reach an answer or the grade: reading posenc's files or the grader's (links followed) and
   other processes' ``/proc`` entries, writing any file, starting or signalling a process or a
   subinterpreter, sockets, ``ctypes``, ``gc``'s object lists, making code at run time (``compile``,
   ``exec``, ``eval``, ``marshal``, new code objects: only the student's own code object runs, so
   dataclasses and named tuples are refused too) and changing a function's code. Each refusal is
   also written, one line, to FLAG_FD for the teacher's report;
4. only then does the student's code run: its definitions first, then one call per case the
   grader sends. Each answer goes back as plain data; the grader judges it.

Everything the student's code can change is in this process, which holds no reference, no
answer key and no course seed: it can only send values, and the grader compares them.
"""

import os
import sys


def _read_setup(fd):
    import json
    import struct

    size = struct.unpack("<Q", _exactly(fd, 8))[0]
    return json.loads(_exactly(fd, size))


def _exactly(fd, count):
    parts, left = [], count
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            raise EOFError
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _load_wire(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_posenc_wire", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: Audit events refused once the student's code may run, with the teacher's words for each.
_REFUSED = {
    "subprocess.Popen": "started a process",
    "os.system": "started a process",
    "os.exec": "started a process",
    "os.posix_spawn": "started a process",
    "os.spawn": "started a process",
    "os.fork": "started a process",
    "os.forkpty": "started a process",
    "os.startfile": "started a process",
    "pty.spawn": "started a process",
    "os.kill": "sent a signal to another process",
    "os.killpg": "sent a signal to another process",
    "signal.pthread_kill": "sent a signal to another process",
    "os.chdir": "changed the working folder",
    "os.fchdir": "changed the working folder",
    "os.chroot": "changed the working folder",
    "os.remove": "changed files",
    "os.rename": "changed files",
    "os.rmdir": "changed files",
    "os.mkdir": "changed files",
    "os.symlink": "changed files",
    "os.link": "changed files",
    "os.truncate": "changed files",
    "os.chmod": "changed files",
    "os.chown": "changed files",
    "os.utime": "changed files",
    "os.setxattr": "changed files",
    "os.removexattr": "changed files",
    "mmap.__new__": "mapped memory or a file",
    "marshal.loads": "ran code built at run time (marshal)",
    "marshal.load": "ran code built at run time (marshal)",
    "code.__new__": "ran code built at run time (a new code object)",
    "gc.get_objects": "searched the process's objects (gc)",
    "gc.get_referrers": "searched the process's objects (gc)",
    "gc.get_referents": "searched the process's objects (gc)",
    "sys._current_frames": "read other threads' frames",
    "urllib.Request": "opened a network connection",
    "webbrowser.open": "started a process",
    "sqlite3.connect": "changed files",
    "cpython.run_command": "ran code built at run time",
    "cpython.run_file": "ran code built at run time",
    "cpython.run_module": "ran code built at run time",
    "cpython.run_stdin": "ran code built at run time",
    "cpython.run_interactivehook": "ran code built at run time",
    "cpython.PyInterpreterState_New": "started a subinterpreter",
}
_REFUSED_PREFIXES = (("socket.", "opened a network connection"), ("ctypes.", "used ctypes"),
                     ("shutil.", "changed files"))
_REFUSED_ITEMS = tuple(_REFUSED.items())
_S_ISLNK = __import__("stat").S_ISLNK
_OWN_PROC = f"/proc/{os.getpid()}/"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


# --- the kernel's sandbox (Landlock, Linux 5.13+): what C code cannot get round either -------------
_FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
_READ = (1 << 2) | (1 << 3)  # LANDLOCK_ACCESS_FS_READ_FILE | READ_DIR: no EXECUTE, no write of any kind


def _landlock(readable):
    """Restrict this process with Landlock: read (no execute, no write, no make, no remove) only below
    ``readable``; no TCP (ABI 4+), no signals or abstract sockets outside it (ABI 6+); ptrace and
    ``/proc/<pid>/mem`` of other processes are refused by Landlock itself. Returns the ABI used, or 0 when
    the kernel has no Landlock (the audit hook still applies)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    abi = syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # landlock_create_ruleset(VERSION)
    if abi < 1:
        return 0
    fs = _FS_RIGHTS_BY_ABI.get(abi, (1 << 16) - 1)

    class Ruleset(ctypes.Structure):
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    attr = Ruleset(fs, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = syscall(444, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for path in readable:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        rule = PathBeneath(_READ if os.path.isdir(path) else (1 << 2), fd)
        if syscall(445, ruleset, 1, ctypes.byref(rule), ctypes.c_uint32(0)) < 0:  # LANDLOCK_RULE_PATH_BENEATH
            os.close(fd)
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
        os.close(fd)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if syscall(446, ruleset, ctypes.c_uint32(0)) < 0:  # landlock_restrict_self
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(ruleset)
    return abi


def _readable(sys_path, forbidden, posenc_dir, cwd):
    """What the student's process may read: Python's own files (the environment's prefix, its import path),
    the system's libraries and settings, its own folder. Never posenc's package, and nothing else below a
    forbidden root (the repository, the submissions, the grader's files), except a Python environment that
    lives there (a clone's .venv)."""

    def below(path, root):
        return path == root or path.startswith(root + "/")

    environments = [os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}]
    places = {*environments, *sys_path, "/usr", "/lib", "/lib64", "/etc", "/dev", "/sys/devices/system/cpu", cwd}
    places |= {os.path.dirname(m.__file__) for m in list(sys.modules.values()) if getattr(m, "__file__", None)}
    chosen = []
    for place in sorted(p for p in places if p and os.path.exists(p)):
        real = os.path.realpath(place)
        if below(real, posenc_dir):
            continue  # posenc itself (a posenc installed into site-packages stays readable there: see the module)
        if any(below(real, root) for root in forbidden) and not any(below(real, env) for env in environments):
            continue
        chosen.append(real)
    return chosen


def _make_hook(forbidden, cwd, student_code, flag_fd):
    """The audit hook. It reads only its own default arguments (immutable values and built-in
    functions captured now), so that nothing the student's code rebinds afterwards (builtins,
    ``os``, ``sys``) changes what it decides."""

    def hook(
        event,
        args,
        _refused=_REFUSED_ITEMS,
        _prefixes=_REFUSED_PREFIXES,
        _forbidden=tuple(forbidden),
        _cwd=cwd,
        _code=student_code,
        _fd=flag_fd,
        _write=os.write,
        _type=type,
        _str=str,
        _bytes=bytes,
        _int=int,
        _len=len,
        _deny=PermissionError,
        _writes=_WRITE_FLAGS,
        _lstat=os.lstat,
        _readlink=os.readlink,
        _islink=_S_ISLNK,
        _own_proc=_OWN_PROC,
    ):
        why = None
        if event == "open":
            path, mode, flags = (*tuple(args), None, None, None)[:3]
            if _type(path) is _int:
                path = None  # an open file descriptor
            elif _type(path) is _bytes:
                path = path.decode("utf-8", "surrogateescape")
            elif _type(path) is not _str:
                why = "read a file named by an object that is not a string"
            if why is None:
                writing = (_type(mode) is _str and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)) or (
                    _type(flags) is _int and flags & _writes
                )
                if writing:
                    why = "wrote a file"
                elif path is not None:
                    # the path as the kernel resolves it: "..", and every symbolic link followed
                    # (/proc/self/root/..., a link placed beforehand) with the functions captured above
                    pending = (path if path.startswith("/") else _cwd + "/" + path).split("/")
                    parts, hops = [], 0
                    while pending:
                        part = pending.pop(0)
                        if part == "..":
                            if parts:
                                parts.pop()
                            continue
                        if not part or part == ".":
                            continue
                        here = "/" + "/".join([*parts, part])
                        try:
                            link = _islink(_lstat(here).st_mode)
                        except OSError:
                            link = False
                        if link and hops < 40:
                            hops += 1
                            target = _readlink(here)
                            pending = target.split("/") + pending
                            if target.startswith("/"):
                                parts = []
                            continue
                        parts.append(part)
                    normal = "/" + "/".join(parts)
                    for root in _forbidden:
                        if normal == root or normal.startswith(root + "/"):
                            why = "read posenc's or the grader's files"
                    if normal.startswith("/proc/") and not normal.startswith(_own_proc):
                        why = "read another process's files (/proc)"
        elif event == "import":
            name = args[0]
            if _type(name) is not _str or name == "posenc" or name.startswith("posenc.") or name.startswith("posenc_"):
                why = "imported posenc (switched off here)"
        elif event == "exec":
            if args[0] is not _code:
                why = "ran code built at run time (exec, eval)"
        elif event == "compile":
            why = "ran code built at run time (compile, exec, eval, a dataclass or namedtuple)"
        elif event == "object.__setattr__":
            if _len(args) > 1 and args[1] in ("__code__", "__defaults__", "__kwdefaults__", "__globals__"):
                why = "replaced a function's code"
        elif event == "pickle.find_class":
            if _type(args[0]) is not _str or args[0] == "posenc" or args[0].startswith("posenc."):
                why = "imported posenc (switched off here)"
        else:
            for name, words in _refused:
                if event == name:
                    why = words
            for prefix, words in _prefixes:
                if event.startswith(prefix):
                    why = words
        if why is not None:
            try:
                _write(_fd, (why + "\n").encode())
            except OSError:
                pass
            raise _deny(f"the grader refuses this here ({event}): your function {why}")

    return hook


class HiddenFunctionError(RuntimeError):
    """posenc, apart from the helpers the task allows, is switched off while a student's function runs."""


def _stubs(helpers, ask, state, names=()):
    """Stand-in modules ``posenc`` (and the helpers' own modules): allowed helpers ask the grader."""
    import types

    class SwitchedOff:
        def __init__(self, name):
            self._posenc_stub_name = name

        def __call__(self, *args, **kwargs):
            state["violation"] = state["violation"] or self._posenc_stub_name
            raise HiddenFunctionError(f"{self._posenc_stub_name} is switched off while your function runs")

        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return SwitchedOff(f"{self._posenc_stub_name}.{name}")

        def __repr__(self):
            return f"<{self._posenc_stub_name}: switched off>"

    class Stub(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return SwitchedOff(f"{self.__name__}.{name}")

    modules = {}
    for name in ["posenc", *names, *(module for _, module, _ in helpers)]:
        if name not in modules:
            modules[name] = Stub(name)
            modules[name].__path__ = []
    for name, module in modules.items():  # posenc.rope is also the attribute rope of posenc
        parent, _, child = name.rpartition(".")
        if parent in modules:
            setattr(modules[parent], child, module)
    for public, module, attr in helpers:

        def helper(*args, _name=public, **kwargs):
            return ask(_name, args, kwargs)

        helper.__name__ = helper.__qualname__ = attr
        setattr(modules[module], attr, helper)
        setattr(modules["posenc"], attr, helper)
    return modules


def _exception(error):
    import builtins

    bases = [c.__name__ for c in type(error).__mro__ if getattr(builtins, c.__name__, None) is c]
    found = {"name": type(error).__name__, "bases": bases}
    try:
        found["text"] = str(error)[:2000]
    except BaseException:
        found["text"] = ""
    if isinstance(error, SystemExit):
        code = error.code
        found["code"] = code if code is None or type(code) in (int, str) else repr(code)[:200]
    return found


def main():
    read_fd, write_fd, flag_fd = (int(a) for a in sys.argv[1:4])
    setup = _read_setup(read_fd)
    sys.path[:] = setup["sys_path"]
    wire = _load_wire(setup["wire"])
    import io
    import threading

    import numpy  # noqa: F401

    for name in setup["preload"]:
        try:
            __import__(name)
        except BaseException:
            pass
    state = {"violation": None}
    lock = threading.Lock()

    def ask(name, args, kwargs):
        with lock:
            wire.write_message(write_fd, {"op": "helper", "name": name}, [list(args), dict(kwargs)])
            message, value = wire.read_message(read_fd)
        if message.get("op") == "helper-result":
            return value
        raise RuntimeError(str(message.get("error", "the helper failed")))

    sys.modules.update(_stubs(setup["helpers"], ask, state, setup.get("posenc_modules", ())))
    source = setup["source"]
    code = compile(source, "<your notebook>", "exec")
    os.set_blocking(flag_fd, False)
    try:
        landlock = _landlock(_readable(setup["sys_path"], setup["forbidden"], setup["posenc_dir"], setup["cwd"]))
    except OSError as error:
        landlock = f"{error}"
    sys.stdout = sys.stderr = io.StringIO()
    sys.stdin = None
    sys.addaudithook(_make_hook(setup["forbidden"], setup["cwd"], code, flag_fd))
    # --- from here on, the student's code runs ---
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    problems = []
    try:
        exec(code, namespace)
    except BaseException as error:
        problems.append(_exception(error))
    function = namespace.get(setup["function"])
    own = getattr(function, "_posenc_stub_name", None) if function is not None else None
    wire.write_message(
        write_fd,
        {"op": "ready", "defined": callable(function), "own": own if isinstance(own, str) else None,
         "landlock": landlock if isinstance(landlock, int | str) else None,
         "problems": [p for p in namespace.get("__posenc_problems__", []) if isinstance(p, dict)][:20] + problems},
    )
    while True:
        try:
            message, value = wire.read_message(read_fd)
        except (EOFError, OSError):
            break
        except BaseException as error:  # an input this process cannot rebuild (torch not loaded, say)
            wire.write_message(write_fd, {"op": "unreadable", "id": None, "error": f"input: {error}"[:500]})
            continue
        if message.get("op") != "call":
            break
        kwargs = value
        state["violation"] = None
        reply = {"op": "returned", "id": message["id"]}
        try:
            result = function(**kwargs)
        except BaseException as error:
            reply["op"], reply["error"], result = "raised", _exception(error), None
        reply["violation"] = state["violation"] if isinstance(state["violation"], str) else None
        try:
            wire.write_message(write_fd, reply, [result, kwargs])
        except BaseException as error:
            unreadable = {"op": "unreadable", "id": message["id"], "error": f"{type(error).__name__}: {error}"[:500]}
            wire.write_message(write_fd, unreadable)


if __name__ == "__main__":
    try:
        main()
    finally:
        os._exit(0)
