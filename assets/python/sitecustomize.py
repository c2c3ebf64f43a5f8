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
  {"ev": "end", "t": 13.1}                        an iterator ran out (t: when
                            next() raised, its workers shut down)
  {"ev": "rank", "pid": 126, "rank": 0, "world": 2, "torch": "1.13.1"}
                            the process joined torch.distributed
                            (init_process_group returned); every later
                            line of it carries "rank": R and "coll": s in
                            collectives so far (the synchronous calls of
                            torch.distributed, and the gradient
                            all-reduce of a DDP model on the CPU through a
                            communication hook that calls torch's default
                            one, timed from its launch to its completion,
                            overlaps merged)
  {"ev": "error", "pid": 127, "type": "AttributeError",
   "at": "torch/distributed/elastic/multiprocessing/api.py:to_map"}
                            an uncaught exception ends the process (a
                            launcher's too, torchrun's, which never sees a
                            DataLoader): its type and its innermost frame,
                            the file relative to its sys.path entry

Nothing happens until the program itself imports torch's DataLoader (the
hook does not import torch), nor in any process but the first Python
process of the command that loads it (forked workers and other Python
children stay quiet), except a rank: any Python process of the command
that calls init_process_group speaks from then on, tagged with its rank,
however it was started (torch.multiprocessing.spawn, whose children get
the descriptor passed on; a shell loop setting RANK and WORLD_SIZE; mpirun).
A process started with RANK (or OMPI_COMM_WORLD_RANK, PMI_RANK) in its
environment is taken for a rank and waits for its init_process_group.  CNNTOP_HOOK_INO says which pipe the descriptor is
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
    def __init__(self, fd, ident, muted):
        self.fd = fd
        self.ident = ident
        self.pid = os.getpid()
        self.muted = muted  # a rank-to-be: quiet until init_process_group
        self.rank = None
        self.coll = 0.0  # s in collectives, overlaps merged
        self.coll_until = 0.0
        self.depth = 0  # inside a timed collective: inner calls are its own

    def send(self, text):
        if self.muted or os.getpid() != self.pid:  # a forked worker: not ours to say
            return
        if not _is_pipe(self.fd, self.ident):  # closed, or now another file
            self.pid = -1
            return
        try:
            os.write(self.fd, (text + "\n").encode())
        except OSError:
            self.pid = -1

    def send_lines(self, lines):
        """Lines that belong together (a window and its rows), each in its
        own write: a pipe keeps a write of at most PIPE_BUF (4096) bytes
        whole, so another process's lines may come between them but never
        into one; the rank each carries tells cnntop whose it is."""
        for line in lines:
            self.send(line)

    def rank_tag(self):
        """What a rank's window lines carry: its rank; "" in one process."""
        return "" if self.rank is None else ', "rank": %d' % self.rank

    def tag(self):
        """What a rank's lines carry: its rank, its time in collectives."""
        if self.rank is None:
            return ""
        return ', "rank": %d, "coll": %.6f' % (self.rank, self.coll)

    def join(self, rank, world, version):
        """This process joined torch.distributed as rank of world."""
        if self.rank is not None or self.pid == -1:
            return
        self.pid = os.getpid()  # a forked rank speaks for itself
        self.muted = False
        self.rank = rank
        self.send('{"ev": "rank", "pid": %d, "rank": %d, "world": %d, "torch": "%s"}'
                  % (self.pid, rank, world, version))

    def timed(self, t0, t1):
        """A collective from t0 to t1, counted once where it overlaps."""
        start = max(t0, self.coll_until)
        if t1 > start:
            self.coll += t1 - start
        self.coll_until = max(self.coll_until, t1)


def _batch_len(batch):
    """Samples in a batch: the first dimension of its first tensor."""
    while isinstance(batch, (list, tuple)) and batch:
        batch = batch[0]
    if isinstance(batch, dict) and batch:
        return _batch_len(next(iter(batch.values())))
    shape = getattr(batch, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) else 0


def _patch(module, feed, hello):
    base = module._BaseDataLoaderIter
    orig_next = base.__next__
    import torch  # already imported: this runs inside torch's own import

    if hello:
        feed.send('{"ev": "hello", "pid": %d, "torch": "%s"}' % (os.getpid(), torch.__version__))

    def __next__(self):
        asked = time.monotonic()
        last = getattr(self, "_cnntop_last", None)
        try:
            batch = orig_next(self)
        except StopIteration:
            # When the loop ends for the program: after the workers' shutdown.
            feed.send('{"ev": "end", "t": %.6f%s}' % (time.monotonic(), feed.tag()))
            raise
        got = time.monotonic()
        if last is None:
            workers = [w.pid for w in getattr(self, "_workers", []) if w.pid]
            if workers:
                feed.send('{"ev": "workers", "pids": [%s]%s}'
                          % (", ".join(map(str, workers)), feed.tag()))
            feed.send('{"ev": "config", "threads": %d, "workers": %d%s}'
                      % (torch.get_num_threads(), int(getattr(self, "_num_workers", -1)),
                         feed.tag()))
        step = asked - last if last is not None else 0.0
        self._cnntop_last = got
        feed.send('{"ev": "batch", "n": %d, "wait": %.6f, "step": %.6f, "t": %.6f%s}'
                  % (_batch_len(batch), got - asked, step, got, feed.tag()))
        return batch

    base.__next__ = __next__


# torch.distributed's collectives, timed while they run (async_op: the call).
_COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "_all_gather_base",
                "broadcast", "reduce", "reduce_scatter", "reduce_scatter_tensor",
                "_reduce_scatter_base", "all_to_all", "all_to_all_single", "gather", "scatter",
                "barrier")


def _timed(fn, feed):
    def collective(*args, **kwargs):
        if feed.depth:
            return fn(*args, **kwargs)
        feed.depth += 1
        t0 = time.monotonic()
        try:
            return fn(*args, **kwargs)
        finally:
            feed.depth -= 1
            feed.timed(t0, time.monotonic())
    collective.__wrapped__ = fn
    for a in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(collective, a, getattr(fn, a, None))
    return collective


def _patch_c10d(module, feed):
    """init_process_group says the rank; the collectives are timed."""
    orig_init = module.init_process_group

    def init_process_group(*args, **kwargs):
        out = orig_init(*args, **kwargs)
        try:
            import torch
            feed.join(module.get_rank(), module.get_world_size(), torch.__version__)
        except Exception:
            pass
        return out

    init_process_group.__wrapped__ = orig_init
    init_process_group.__doc__ = orig_init.__doc__
    module.init_process_group = init_process_group
    for name in _COLLECTIVES:
        fn = getattr(module, name, None)
        if callable(fn):
            setattr(module, name, _timed(fn, feed))


class _Waiter:
    """DDP's all-reduce futures, each waited for on a thread of the hook's
    own, which times it and completes the future handed back to DDP.

    A DDP model freed runs ~ProcessGroupGloo with the GIL held, and that
    joins gloo's worker threads; a worker that needs the GIL then waits for
    good, and so does the model's end (the rank's TCPStore thread
    meanwhile spins at 100% once rank 0 has gone).  A Python comm hook
    gives gloo's workers two such needs that DDP's own C++ all-reduce does
    not: torch 1.13 runs a future's then() callback on the worker, taking
    the GIL to run it and to drop it; and the bucket's tensor, which
    bucket.buffer() showed to Python, takes the GIL when its last reference
    goes, which a worker may hold last, in the all-reduce's work.  So no
    Python of the hook runs on gloo's threads: the all-reduce's future has
    no callback, and this thread, a Python thread that gloo never joins,
    waits for it (the GIL let go), notes when it completed and completes
    DDP's future with its tensor, or its error; and each bucket's last
    tensor is held past the model's end (_HELD), so that no worker drops
    it last."""

    def __init__(self):
        self.queue = None
        self.pid = None

    def handed(self, fut, t0, feed):
        """The future for DDP: fut's tensor once fut completes."""
        import torch
        if self.pid != os.getpid():  # the first call, or a forked process
            import queue
            import threading
            self.queue, self.pid = queue.SimpleQueue(), os.getpid()
            threading.Thread(target=_Waiter._run, args=(self.queue,), daemon=True,
                             name="cnntop-allreduce").start()
        out = torch.futures.Future()
        self.queue.put((fut, out, t0, feed))
        return out

    @staticmethod
    def _run(q):
        while True:
            fut, out, t0, feed = q.get()
            try:
                value = fut.wait()[0]
            except Exception as e:  # DDP's backward raises it, as without the hook
                out.set_exception(e)
            else:
                feed.timed(t0, time.monotonic())
                out.set_result(value)
            fut = out = value = None  # DDP's to hold, not this thread's


_WAITER = _Waiter()
# [a weak reference to a DDP model, {bucket index: its last tensor}], held
# till a later model's first forward finds the model gone (its workers long
# done with them) or the program's end.
_HELD = []


def _allreduce_timed(feed, model):
    """DDP's default gradient all-reduce (default_hooks.allreduce_hook, the
    same result), timed from its launch to its completion (_Waiter)."""
    import weakref
    import torch.distributed as dist
    held = {}
    _HELD[:] = [h for h in _HELD if h[0]() is not None]
    _HELD.append([weakref.ref(model), held])

    def hook(group, bucket):
        t0 = time.monotonic()
        feed.depth += 1
        try:
            group = group if group is not None else dist.group.WORLD
            tensor = bucket.buffer().div_(group.size())
            fut = dist.all_reduce(tensor, group=group, async_op=True).get_future()
        finally:
            feed.depth -= 1
        try:
            held[bucket.index()] = tensor
        except Exception:  # a torch without index(): not held, the job goes on
            pass
        return _WAITER.handed(fut, t0, feed)
    return hook


def _patch_ddp(module, feed):
    """At a DDP model's first forward, unless the program registered a
    communication hook of its own, the timed default one, if the model's
    parameters are all on the CPU (the futures of another device's tensors
    carry its streams, which a plain future does not)."""
    cls = module.DistributedDataParallel
    orig_register = cls.register_comm_hook
    orig_forward = cls.forward

    def register_comm_hook(self, state, hook):
        self._cnntop_hooked = True
        return orig_register(self, state, hook)

    def forward(self, *args, **kwargs):
        if not getattr(self, "_cnntop_hooked", False):
            self._cnntop_hooked = True
            try:
                if all(p.device.type == "cpu" for p in self.module.parameters()):
                    orig_register(self, self.process_group, _allreduce_timed(feed, self))
            except Exception:
                pass
        return orig_forward(self, *args, **kwargs)

    register_comm_hook.__doc__ = orig_register.__doc__
    cls.register_comm_hook = register_comm_hook
    cls.forward = forward


def _patch_mp(module, feed):
    """torch.multiprocessing.spawn's children keep the descriptor (the
    spawn start method closes all others)."""
    orig = module.spawnv_passfds

    def spawnv_passfds(path, args, passfds):
        if _is_pipe(feed.fd, feed.ident) and feed.fd not in passfds:
            passfds = tuple(passfds) + (feed.fd,)
        return orig(path, args, passfds)

    module.spawnv_passfds = spawnv_passfds


class _Finder(importlib.abc.MetaPathFinder):
    """Patches each module of `patches` right after it is imported."""

    def __init__(self, patches):
        self.patches = dict(patches)

    def find_spec(self, name, path, target=None):
        patch = self.patches.pop(name, None)
        if patch is None:
            return None
        at = sys.meta_path.index(self)
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            if self.patches:
                sys.meta_path.insert(at, self)
        if spec is None or spec.loader is None:
            return spec
        orig_exec = spec.loader.exec_module

        def exec_module(module):
            orig_exec(module)
            try:
                patch(module)
            except Exception:  # the program matters more than the figures
                pass

        spec.loader.exec_module = exec_module
        return spec


def _say_error(feed, kind, tb):
    """The uncaught exception ending this process, as an "error" line."""
    import json
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return
    code = tb.tb_frame.f_code
    path = os.path.abspath(code.co_filename)
    roots = [os.path.join(os.path.abspath(p), "") for p in sys.path if p]
    root = max((r for r in roots if path.startswith(r)), key=len, default="")
    at = ("%s:%s" % (path[len(root):], code.co_name))[-127:]

    def printable(text):  # what cnntop accepts: printable ASCII (a non-ASCII path, "?")
        return "".join(c if " " <= c <= "~" else "?" for c in text)
    feed.send(json.dumps({"ev": "error", "pid": os.getpid(),
                          "type": printable(kind.__name__[:47]), "at": printable(at)}))


def _excepthook(feed, orig):
    """sys.excepthook saying the exception first, then doing what it did."""
    def hook(kind, value, tb):
        try:
            _say_error(feed, kind, tb)
        except Exception:  # the program's own report matters more
            pass
        orig(kind, value, tb)
    return hook


def _install():
    fd = os.environ.get("CNNTOP_HOOK_FD", "")
    ident = os.environ.get("CNNTOP_HOOK_INO", "")
    if not fd.isdigit():
        return
    if not _is_pipe(int(fd), ident):  # a launcher closed it: nothing to say
        return
    # The first Python process claims the hook; its children stay quiet
    # unless they join torch.distributed, as a process started as a rank
    # (RANK in its environment: a shell loop, torchrun, mpirun) will.
    rank = any(os.environ.get(k, "").isdigit()
               for k in ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"))
    child = bool(os.environ.get("CNNTOP_HOOK_PID"))
    if not child and not rank:
        os.environ["CNNTOP_HOOK_PID"] = str(os.getpid())
    feed = _Feed(int(fd), ident, muted=child or rank)
    patches = {
        "torch.utils.data.dataloader": lambda m: _patch(m, feed, not (child or rank)),
        "torch.distributed.distributed_c10d": lambda m: _patch_c10d(m, feed),
        "torch.nn.parallel.distributed": lambda m: _patch_ddp(m, feed),
        "multiprocessing.util": lambda m: _patch_mp(m, feed),
    }
    if "multiprocessing.util" in sys.modules:
        _patch_mp(sys.modules["multiprocessing.util"], feed)
        del patches["multiprocessing.util"]
    sys.meta_path.insert(0, _Finder(patches))
    sys.excepthook = _excepthook(feed, sys.excepthook)
    import cnntop_layers  # the layer window (its own file, beside this one)
    cnntop_layers.watch(feed)


try:
    _install()
except Exception:
    pass
_chain()
