"""cnntop's layer window: the user's model timed module by module.

Imported by cnntop's sitecustomize.py (the hook) when torch.optim is
imported in the command's main Python process.  A model counts as trained
when an optimizer steps: the hook wraps torch.optim.Optimizer so that
each optimizer's step() is counted (the first optimizer created wraps its
class's step, as torch's own profiler hook does).  Steps are numbered
from 1 by the optimizer's step() calls; the window is steps FIRST ..
FIRST + STEPS - 1 (CNNTOP_LAYERS="FIRST:STEPS", set by `cnntop exec
--layers`; "0" turns it off).  Only while the window is open are hooks on
every module installed (torch's global module hooks, so the loss module
is seen too), and only module calls with gradients enabled count (an
evaluation under torch.no_grad() is not training):

  forward   a leaf module's call, from its forward pre-hook to its hook;
  backward  autograd runs the modules' backward in reverse: the time from
            the previous module's backward node finishing (or from the
            start of torch.autograd.backward) to this module's output node
            finishing (a hook on its grad_fn) is this module's;
  FLOPs     Conv2d (any _ConvNd) and Linear from their shapes: 2 x MACs
            forward (bias not counted); backward as much again for the
            weights' gradient and again for the input's, when its input
            needs one (not the first layer's): PyTorch's convention of
            forward x 3 for training, and cnntop's engine's count (46.2
            MFLOP a training image for its model).

The time of the model's forward outside any leaf module (functional calls
in forward()), of backward after the last module, and the optimizer's
step() are rows of their own.  When the window closes the hooks are
removed and the table is sent (cnntop/hookfeed.h):

  {"ev": "window", "first": 5, "steps": 20, "layers": 9}
  {"ev": "layer", "name": "conv1", "kind": "Conv2d", "calls": 20,
   "fwd": 0.1, "bwd": 0.2, "flops": 1.2e9, "bwd_flops": 1.2e9,
   "img_flops": 903168}   one a row: flops and bwd_flops summed over the
                          calls, img_flops a training image's in one call

and then the window's cost: the median step (one optimizer step to the
next) in the window against the steps after it, at exit and as steps
accumulate:  {"ev": "pace", "in": 0.031, "out": 0.030, "n": 35}.
"""
import atexit
import importlib.abc
import importlib.util
import os
import sys
import time

MAX_ROWS = 60          # the feed's limit is 64 rows; the rest are summed
NAME_MAX = 40          # the feed's limit is 47 bytes


def _window():
    """(first, steps) from CNNTOP_LAYERS, or None when off."""
    text = os.environ.get("CNNTOP_LAYERS", "5:20")
    parts = text.split(":")
    if len(parts) != 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    first, steps = int(parts[0]), int(parts[1])
    return (first, steps) if first >= 1 and steps >= 1 else None


def _median(xs):
    s = sorted(xs)
    return s[len(s) // 2] if s else 0.0


def _word(text):
    """A module name as the feed takes it: printable ASCII, bounded."""
    text = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in text)
    return text[-NAME_MAX:] or "_"


def _safe(fn):
    """fn, whose failure leaves the program alone (returns None: no change
    to the module's input or output, nor to the gradients)."""
    def call(*args):
        try:
            fn(*args)
        except Exception:
            pass
    return call


class _Row:
    __slots__ = ("name", "kind", "calls", "fwd", "bwd", "flops", "bwd_flops", "img_flops")

    def __init__(self, name, kind):
        self.name, self.kind = name, kind
        self.calls, self.fwd, self.bwd = 0, 0.0, 0.0
        self.flops, self.bwd_flops, self.img_flops = 0.0, 0.0, 0.0


def _grads(module, inputs):
    """How many gradients backward computes of a Conv or Linear call: the
    weights' (when they need one) and the input's (when it needs one)."""
    w = getattr(module, "weight", None)
    x = inputs[0] if inputs else None
    return int(bool(getattr(w, "requires_grad", False))) + \
        int(bool(getattr(x, "requires_grad", False)))


def _flops(module, output):
    """Forward FLOPs of one call (2 x MACs) and the batch it had, or (0, 0)."""
    import torch.nn as nn
    shape = getattr(output, "shape", None)
    if shape is None or len(shape) < 1 or shape[0] == 0:
        return 0.0, 0
    if isinstance(module, nn.modules.conv._ConvNd):
        k = 1
        for d in module.kernel_size:
            k *= d
        return 2.0 * output.numel() * (module.in_channels // module.groups) * k, shape[0]
    if isinstance(module, nn.Linear):
        return 2.0 * output.numel() * module.in_features, shape[0]
    return 0.0, 0


class Layers:
    """The window's state: the step count, the hooks while open, the rows."""

    def __init__(self, feed, first, steps):
        self.feed, self.first, self.steps = feed, first, steps
        self.done = 0           # optimizer steps so far
        self.t_step = None      # when the last step ended
        self.handles = []
        self.open = False
        self.closed = False
        self.rows = {}          # id(module) -> _Row
        self.names = {}         # id(module) -> its name in the trained model
        self.stack = []         # (module, t0) of the calls under way
        self.rest_fwd = 0.0     # top-level forward time outside leaf modules
        self.leaf_fwd = 0.0
        self.bwd_rest = 0.0
        self.bwd_last = None    # while in backward: when the last node finished
        self.opt = 0.0
        self.opt_kind = "optimizer"
        self.leaf_at = 0.0      # leaf_fwd when the top-level call began
        self.torch = None       # the module, once an optimizer is made
        self.in_steps = []      # step periods in the window
        self.out_steps = []     # after it
        self.sent_at = 0

    # The window's hooks ---------------------------------------------------
    def _row(self, module):
        row = self.rows.get(id(module))
        if row is None:
            name = self.names.get(id(module)) or type(module).__name__
            row = self.rows[id(module)] = _Row(_word(name), _word(type(module).__name__))
        return row

    def _name_model(self, module):
        """A top-level module with children: name its modules by path."""
        if module._modules and id(module) not in self.names:
            for name, m in module.named_modules():
                if name and id(m) not in self.names:
                    self.names[id(m)] = name

    def _pre(self, module, inputs):
        if not self.torch.is_grad_enabled():
            return
        if not self.stack:
            self._name_model(module)
            self.leaf_at = self.leaf_fwd
        self.stack.append((module, time.perf_counter()))

    def _post(self, module, inputs, output):
        if not self.stack or self.stack[-1][0] is not module:
            return
        _, t0 = self.stack.pop()
        dt = time.perf_counter() - t0
        if not module._modules:
            row = self._row(module)
            row.calls += 1
            row.fwd += dt
            self.leaf_fwd += dt
            flops, batch = _flops(module, output)
            if flops:
                grads = _grads(module, inputs)
                row.flops += flops
                row.bwd_flops += grads * flops
                row.img_flops = (1 + grads) * flops / batch
            node = getattr(output, "grad_fn", None) if isinstance(output, self.torch.Tensor) else None
            if node is not None:
                node.register_hook(_safe(lambda gi, go, row=row: self._bwd_node(row)))
        if not self.stack and module._modules:
            self.rest_fwd += dt - (self.leaf_fwd - self.leaf_at)

    def _bwd_node(self, row):
        if self.bwd_last is None:
            return
        now = time.perf_counter()
        row.bwd += now - self.bwd_last
        self.bwd_last = now

    def backward(self, orig, *args, **kwargs):
        """torch.autograd.backward, timed while the window is open."""
        if not self.open or self.bwd_last is not None:
            return orig(*args, **kwargs)
        self.bwd_last = time.perf_counter()
        try:
            return orig(*args, **kwargs)
        finally:
            self.bwd_rest += time.perf_counter() - self.bwd_last
            self.bwd_last = None

    # The steps -------------------------------------------------------------
    def _open(self):
        import torch.nn.modules.module as mm
        self.handles = [mm.register_module_forward_pre_hook(_safe(self._pre)),
                        mm.register_module_forward_hook(_safe(self._post))]
        self.open = True

    def _close(self):
        for h in self.handles:
            h.remove()
        self.handles, self.open, self.closed = [], False, True
        self.stack = []
        self._send()

    def stepped(self, optimizer, seconds):
        """After an optimizer's step(): count it, open or close the window."""
        now = time.perf_counter()
        if self.open:
            self.opt += seconds
            self.opt_kind = _word(type(optimizer).__name__ + " step")
        if self.t_step is not None:
            k = self.done + 1  # the step that just ended
            if self.first <= k < self.first + self.steps:
                self.in_steps.append(now - self.t_step)
            elif k > self.first + self.steps and len(self.out_steps) < 100000:
                self.out_steps.append(now - self.t_step)
                n = len(self.out_steps)
                if n >= 4 and n & (n - 1) == 0:
                    self.pace()
        self.done += 1
        self.t_step = now
        self.advance()
        self.t_step = time.perf_counter()  # the hooks' own set-up is not a step's

    def advance(self):
        if self.closed:
            return
        if not self.open and self.done == self.first - 1:
            self._open()
        elif self.open and self.done >= self.first + self.steps - 1:
            self._close()

    def _send(self):
        rows = sorted(self.rows.values(), key=lambda r: -(r.fwd + r.bwd))
        extra = []
        if self.rest_fwd > 0 or self.bwd_rest > 0:
            r = _Row("(outside modules)", "-")
            r.fwd, r.bwd = max(0.0, self.rest_fwd), max(0.0, self.bwd_rest)
            extra.append(r)
        if self.opt > 0:
            r = _Row(self.opt_kind, "optimizer")
            r.fwd, r.calls = self.opt, len(self.in_steps) or 1
            extra.append(r)
        if len(rows) > MAX_ROWS:
            other = _Row("(%d more modules)" % (len(rows) - MAX_ROWS + 1), "-")
            for r in rows[MAX_ROWS - 1:]:
                other.calls += r.calls
                other.fwd += r.fwd
                other.bwd += r.bwd
                other.flops += r.flops
                other.bwd_flops += r.bwd_flops
                other.img_flops += r.img_flops
            rows = rows[:MAX_ROWS - 1] + [other]
        rows += extra
        steps = self.done - self.first + 1
        if steps < 1:
            return
        tag = self.feed.rank_tag()
        lines = ['{"ev": "window", "first": %d, "steps": %d, "layers": %d%s}'
                 % (self.first, max(steps, 0), len(rows), tag)]
        for r in rows:
            lines.append('{"ev": "layer", "name": "%s", "kind": "%s", "calls": %d, '
                         '"fwd": %.6f, "bwd": %.6f, "flops": %.17g, "bwd_flops": %.17g, '
                         '"img_flops": %.17g%s}' % (r.name, r.kind, r.calls, r.fwd, r.bwd,
                                                   r.flops, r.bwd_flops, r.img_flops, tag))
        self.feed.send_lines(lines)

    def pace(self):
        if self.in_steps and self.out_steps:
            self.feed.send('{"ev": "pace", "in": %.6f, "out": %.6f, "n": %d%s}'
                           % (_median(self.in_steps), _median(self.out_steps),
                              len(self.out_steps), self.feed.rank_tag()))

    def at_exit(self):
        if self.open:
            self._close()
        self.pace()


def install(feed, module):
    """Wraps module.Optimizer (torch.optim.optimizer, just imported) so that
    its first instance wraps torch.autograd.backward and its class's step;
    nothing more happens until an optimizer steps."""
    win = _window()
    if win is None:
        return
    layers = Layers(feed, win[0], win[1])
    opt = module.Optimizer
    orig_init = opt.__init__

    def wrap_step(cls):
        step = cls.step
        if getattr(step, "_cnntop", False):
            return

        def step_wrapper(self, *args, **kwargs):
            t0 = time.perf_counter()
            out = step(self, *args, **kwargs)
            try:
                if os.getpid() == feed.pid:
                    layers.stepped(self, time.perf_counter() - t0)
            except Exception:  # the program matters more than the figures
                pass
            return out
        step_wrapper._cnntop = True
        step_wrapper.hooked = True  # torch's own profiling wrapper is inside
        step_wrapper.__wrapped__ = step
        cls.step = step_wrapper

    def wrap_backward():
        import torch
        import torch.autograd
        orig = torch.autograd.backward
        if getattr(orig, "_cnntop", False):
            return

        def backward(*args, **kwargs):
            return layers.backward(orig, *args, **kwargs)
        backward._cnntop = True
        torch.autograd.backward = backward
        layers.torch = torch

    def init(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        try:
            wrap_backward()
            wrap_step(type(self))
            layers.advance()
        except Exception:
            pass

    opt.__init__ = init
    atexit.register(layers.at_exit)


class Finder(importlib.abc.MetaPathFinder):
    """Calls install() right after torch.optim.optimizer is imported."""

    def __init__(self, feed):
        self.feed = feed

    def find_spec(self, name, path, target=None):
        if name != "torch.optim.optimizer":
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
                install(feed, module)
            except Exception:
                pass

        spec.loader.exec_module = exec_module
        return spec


def watch(feed):
    """Waits for torch.optim (the hook's _install calls this)."""
    sys.meta_path.insert(0, Finder(feed))
