"""cnntop's Python hook, loaded by `cnntop exec` (which puts this file's
directory first on PYTHONPATH; `cnntop exec --no-hook` does not).

It times torch.utils.data.DataLoader iteration in the command's main
Python process and sends what it sees to cnntop as JSON lines on the file
descriptor named by CNNTOP_HOOK_FD:

  {"ev": "hello", "pid": 123, "torch": "1.13.1"}   torch's DataLoader was imported
  {"ev": "workers", "pids": [124, 125]}           an iterator started its workers
  {"ev": "config", "threads": 4, "workers": 2}    at an iterator's first batch:
                            torch.get_num_threads() and the num_workers
                            the DataLoader was given
  {"ev": "batch", "n": 64, "wait": 0.0012, "step": 0.034, "t": 12.5}
                            n samples; wait: s next() waited for the batch;
                            step: s from the previous batch to this next()
                            (the training step); t: time.monotonic()
  {"ev": "end", "t": 13.1}                        an iterator ran out

Nothing happens until the program itself imports torch's DataLoader (the
hook does not import torch), nor in any process but the first Python
process of the command that loads it (forked workers and other Python
children stay quiet).  CNNTOP_HOOK_INO says which pipe the descriptor is
("DEV:INO" of its fstat): a launcher may close the descriptor (sudo does)
and the program open a file that gets its number, so before each line the
hook checks that the descriptor is still that pipe, and falls silent for
good when it is not; it never writes into the program's own files.  A sitecustomize the user or the distribution has
(Debian's /usr/lib/python3.X/sitecustomize.py) is imported after this one,
as if this one were not there.  Any failure of the hook leaves the program
alone.
"""
import importlib
import importlib.abc
import importlib.util
import os
import stat
import sys
import time


def _chain():
    """Imports the next sitecustomize on sys.path: the one this shadows."""
    here = os.path.dirname(os.path.abspath(__file__))
    me = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if e.name != "sitecustomize":
            raise
    finally:
        sys.path[:] = saved
        if "sitecustomize" not in sys.modules and me is not None:
            sys.modules["sitecustomize"] = me


def _is_pipe(fd, ident):
    """True while descriptor fd is the pipe cnntop gave ("DEV:INO")."""
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    return stat.S_ISFIFO(st.st_mode) and "%d:%d" % (st.st_dev, st.st_ino) == ident


class _Feed:
    def __init__(self, fd, ident):
        self.fd = fd
        self.ident = ident
        self.pid = os.getpid()

    def send(self, text):
        if os.getpid() != self.pid:  # a forked worker: not ours to say
            return
        if not _is_pipe(self.fd, self.ident):  # closed, or now another file
            self.pid = -1
            return
        try:
            os.write(self.fd, (text + "\n").encode())
        except OSError:
            self.pid = -1


def _batch_len(batch):
    """Samples in a batch: the first dimension of its first tensor."""
    while isinstance(batch, (list, tuple)) and batch:
        batch = batch[0]
    if isinstance(batch, dict) and batch:
        return _batch_len(next(iter(batch.values())))
    shape = getattr(batch, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) else 0


def _patch(module, feed):
    base = module._BaseDataLoaderIter
    orig_next = base.__next__
    import torch  # already imported: this runs inside torch's own import

    feed.send('{"ev": "hello", "pid": %d, "torch": "%s"}' % (os.getpid(), torch.__version__))

    def __next__(self):
        asked = time.monotonic()
        last = getattr(self, "_cnntop_last", None)
        try:
            batch = orig_next(self)
        except StopIteration:
            feed.send('{"ev": "end", "t": %.6f}' % asked)
            raise
        got = time.monotonic()
        if last is None:
            workers = [w.pid for w in getattr(self, "_workers", []) if w.pid]
            if workers:
                feed.send('{"ev": "workers", "pids": [%s]}' % ", ".join(map(str, workers)))
            feed.send('{"ev": "config", "threads": %d, "workers": %d}'
                      % (torch.get_num_threads(), int(getattr(self, "_num_workers", -1))))
        step = asked - last if last is not None else 0.0
        self._cnntop_last = got
        feed.send('{"ev": "batch", "n": %d, "wait": %.6f, "step": %.6f, "t": %.6f}'
                  % (_batch_len(batch), got - asked, step, got))
        return batch

    base.__next__ = __next__


class _Finder(importlib.abc.MetaPathFinder):
    """Patches torch.utils.data.dataloader right after it is imported."""

    def __init__(self, feed):
        self.feed = feed

    def find_spec(self, name, path, target=None):
        if name != "torch.utils.data.dataloader":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        orig_exec = spec.loader.exec_module
        feed = self.feed

        def exec_module(module):
            orig_exec(module)
            try:
                _patch(module, feed)
            except Exception:  # the program matters more than the figures
                pass

        spec.loader.exec_module = exec_module
        return spec


def _install():
    fd = os.environ.get("CNNTOP_HOOK_FD", "")
    ident = os.environ.get("CNNTOP_HOOK_INO", "")
    if not fd.isdigit() or os.environ.get("CNNTOP_HOOK_PID"):
        return
    if not _is_pipe(int(fd), ident):  # a launcher closed it: nothing to say
        return
    # The first Python process claims the hook; its children stay quiet.
    os.environ["CNNTOP_HOOK_PID"] = str(os.getpid())
    feed = _Feed(int(fd), ident)
    sys.meta_path.insert(0, _Finder(feed))
    import cnntop_layers  # the layer window (its own file, beside this one)
    cnntop_layers.watch(feed)


try:
    _install()
except Exception:
    pass
_chain()
