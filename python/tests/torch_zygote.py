"""conftest.run_python's server: an interpreter that imports torch (about
4 CPU-s, most of a small program's run) and nothing of warpforge, then forks
a child for each program it is sent, which runs it as `python <args>` would
in the environment it came with (sys.path from PYTHONPATH, argv, the working
folder, stdout and stderr to files), after torch's import instead of with it.
Requests arrive on stdin and replies leave on stdout as length-prefixed
pickles: (args, env, cwd, stdout path, stderr path) in; the child's pid, then
its exit status, out. Not a test module."""

import atexit
import os
import pickle
import runpy
import struct
import sys
import traceback
import types

# A fresh interpreter's path after its first entry (the script's folder or
# ''), without PYTHONPATH's entries: the standard library and site-packages.
_BASE_PATH = sys.path[1:]
# Replies on a descriptor of their own: what torch's import or a child might
# print to stdout goes to stderr instead.
_REPLIES = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)

import torch  # noqa: E402,F401  (the import every child would repeat)


def _read(stream):
    header = stream.read(4)
    if len(header) < 4:
        return None
    return pickle.loads(stream.read(struct.unpack("<I", header)[0]))


def _write(stream, value):
    data = pickle.dumps(value)
    stream.write(struct.pack("<I", len(data)) + data)
    stream.flush()


def _run_child(args, env, cwd, stdout_path, stderr_path):
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        file = os.open(path, flags, 0o644)
        os.dup2(file, fd)
        os.close(file)
    first = "" if args[0] == "-c" else os.path.dirname(os.path.abspath(args[0]))
    python_path = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [first] + python_path + [p for p in _BASE_PATH if p not in python_path]
    sys.argv = ["-c"] + args[2:] if args[0] == "-c" else list(args)
    status = 0
    try:
        if args[0] == "-c":
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(args[1], "<string>", "exec"), main.__dict__)
        else:
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            status = e.code or 0
        else:
            print(e.code, file=sys.stderr)
            status = 1
    except BaseException:
        traceback.print_exc()
        status = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def main():
    requests, replies = sys.stdin.buffer, _REPLIES
    while (request := _read(requests)) is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _run_child(*request)
        _write(replies, pid)
        _write(replies, os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))


if __name__ == "__main__":
    main()
