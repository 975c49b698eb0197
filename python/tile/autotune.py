"""tile.autotune: a Tile kernel tuned over sets of its constants, as Triton's
@triton.autotune, over the C tuner (tile_jit_autotune_*, docs/runtime.md
"Autotuning"):

    add = tile.autotune("examples/vector_add/vector_add.tile", "vector_add",
                        configs=[{"BLOCK": 256}, {"BLOCK": 1024}, {"BLOCK": 4096}], key=["n"])
    add[lambda meta: ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)](x, y, out, n)

The first launch for a key (here the value of `n`) compiles every config
through the JIT, times each on the launch's own arguments, keeps the
fastest (in memory and in the JIT's disk cache) and launches it; later
launches for the key, in this process or the next, launch the chosen
config at once. Warps are a config's constant too: declare the kernel
`warps(W)` with `const W: i32 = 4` and put "W" in the configs.
"""
import ctypes as C
import os
import threading

from . import _lib
from ._lib import TILE_ERR_INVALID, TILE_OK, check
from .kernel import (JitOptions, KernelInfo, TmaDesc, _args_device, _const_text, _current_device, _emulated_cpu,
                     _is_tensor, _looks_like_path, _Staging, _stream_handle, convert_arg, grid_of, tile_dtype_of)


class _Call:
    """One launch in flight: what the C tuner's callback needs."""

    def __init__(self, grid, args, staged):
        self.grid = grid
        self.args = args
        self.staged = staged
        self.prepared = {}  # config -> (grid, values, ptrs): converted once per launch call
        self.errors = []    # Python exceptions the callback turned into statuses


class Autotuner:
    """A kernel launched as kernel[grid](*args, stream=None), each launch with
    the best of `configs` for its key.

    source_or_path, name, constants, options: as tile.Kernel's (constants
    common to every config; a config's value wins). configs: a list of
    dicts {constant: value}, at least one. key: the kernel parameters whose
    values make the key (a list of names: scalars by value, tensors by shape
    and dtype), or a callable given the launch arguments returning the key
    (any str()-able value), or None (one key for every launch). warmup:
    untimed launches per config (None: 2), reps: timed launches, median
    (None: 10). clock: a callable returning milliseconds, read around each
    timed launch instead of CUDA events (a host-side protocol, or a test's
    fake clock).

    While a key is tuned every config runs warmup + reps times on the
    launch's own arguments: a kernel that updates its inputs in place needs
    a copy to tune on. .last_stats describes the last launch (config,
    tuned, from_disk, ntimed, nskipped, best_ms, key, notes); .best(*args)
    the choice for those arguments' key.
    """

    def __init__(self, source_or_path, name=None, configs=None, key=None, constants=None, options=None, *,
                 warmup=None, reps=None, clock=None, filename=None):
        if _looks_like_path(source_or_path):
            path = os.fspath(source_or_path)
            with open(path, "rb") as f:
                self.source = f.read()
            filename = filename or path
        else:
            self.source = source_or_path.encode() if isinstance(source_or_path, str) else bytes(source_or_path)
        self.filename = filename or "<source>"
        self.name = name
        if not configs:
            raise ValueError("autotune needs at least one config (a dict of constants)")
        self.configs = []
        for c in configs:
            if not isinstance(c, dict) or not all(isinstance(k, str) for k in c):
                raise TypeError("a config is a dict {constant name: value}, not %r" % (c,))
            self.configs.append(dict(c))
        if not (key is None or callable(key) or (isinstance(key, (list, tuple)) and
                                                 all(isinstance(k, str) for k in key))):
            raise TypeError("key is a list of parameter names, a callable of the arguments, or None")
        self.key = list(key) if isinstance(key, (list, tuple)) else key
        self.constants = dict(constants or {})
        self.options = JitOptions(**options) if isinstance(options, dict) else (options or JitOptions())
        for what, v in (("warmup", warmup), ("reps", reps)):
            if v is not None and (not isinstance(v, int) or v < (0 if what == "warmup" else 1)):
                raise ValueError("%s must be an int >= %d, not %r" % (what, 0 if what == "warmup" else 1, v))
        self.warmup = warmup
        self.reps = reps
        self.last_stats = None
        self._clock = clock
        self._tuners = {}    # device -> tile_jit_autotuner handle
        self._infos = {}     # kernel handle -> KernelInfo
        self._params = None  # parameter names (the key's lookup)
        self._lock = threading.Lock()
        self._tls = threading.local()
        self._launch_cb = _lib.AUTOTUNE_LAUNCH_FN(self._on_launch)
        self._clock_cb = _lib.AUTOTUNE_CLOCK_FN(self._on_clock) if clock else _lib.AUTOTUNE_CLOCK_FN()

    def __repr__(self):
        return "<tile.Autotuner %s from %s: %d configs, key %r>" % (self.name or "(its kernel)", self.filename,
                                                                   len(self.configs), self.key)

    # -- the C tuner, one per device -------------------------------------------
    def _tuner(self, device):
        with self._lock:
            t = self._tuners.get(device)
            if t is not None:
                return t
            _lib.init(device)
            common = [(str(k), _const_text(v)) for k, v in self.constants.items()]
            o, keep = self.options.c_struct(common)
            cfgs = (_lib.TileJitAutotuneConfig * len(self.configs))()
            for i, c in enumerate(self.configs):
                arr = (_lib.TileJitDefine * max(len(c), 1))()
                for j, (k, v) in enumerate(c.items()):
                    b = (k.encode(), _const_text(v).encode())
                    keep.append(b)
                    arr[j].name, arr[j].value = b
                keep.append(arr)
                cfgs[i].defines = arr
                cfgs[i].ndefines = len(c)
            d = _lib.TileJitAutotuneDesc()
            d.filename = os.fsencode(self.filename)
            d.source = self.source
            d.len = len(self.source)
            d.kernel = self.name.encode() if self.name else None
            d.opts = C.pointer(o)
            d.configs = cfgs
            d.nconfigs = len(self.configs)
            d.warmup = 0 if self.warmup is None else (self.warmup or -1)  # C: 0 is the default, negative none
            d.reps = self.reps or 0
            d.clock = self._clock_cb
            h = C.c_void_p()
            check(_lib.jit().tile_jit_autotune_create(C.byref(d), C.byref(h)), "tile_jit_autotune_create(%s)" %
                  self.filename)
            del keep  # the tuner copied what it needs
            self._tuners[device] = h.value
            return h.value

    def __del__(self):
        try:
            for h in getattr(self, "_tuners", {}).values():
                _lib.jit().tile_jit_autotune_destroy(h)
        except Exception:
            pass

    def _info(self, k):
        info = self._infos.get(k)
        if info is None:
            info = self._infos[k] = KernelInfo(_lib.rt().tile_kernel_get_info(k).contents)
        return info

    def kernel_info(self, config, device=None):
        """The KernelInfo of config `config` (compiled and loaded if need be)."""
        t = self._tuner(_current_device() if device is None else device)
        k = C.c_void_p()
        check(_lib.jit().tile_jit_autotune_kernel(t, int(config), C.byref(k)), "tile_jit_autotune_kernel(%d)" %
              config)
        return self._info(k.value)

    # -- the key -----------------------------------------------------------------
    def _param_names(self, t):
        """The kernel's parameter names, from the first config that loads
        (the tuner keeps it loaded for tuning)."""
        if self._params is None:
            first, notes = None, []
            for i, c in enumerate(self.configs):
                k = C.c_void_p()
                st = _lib.jit().tile_jit_autotune_kernel(t, i, C.byref(k))
                if st == TILE_OK:
                    self._params = [p.name for p in self._info(k.value).params]
                    break
                first = first or st
                msg = _lib.last_error()
                notes.append("config %d (%s): %s: %s" % (i, " ".join("%s=%s" % (n, _const_text(v)) for n, v in c.items()),
                                                         _lib.STATUS_NAMES[st], msg.split("\n")[0]))
            else:
                raise _lib._error_class(first)(first, "every config of %s failed to load:\n%s" % (
                    self.name or self.filename, "\n".join(notes)), "tile.Autotuner")
        return self._params

    def key_of(self, args, device=None):
        """The key text of these launch arguments ("n=1000", ...)."""
        if self.key is None:
            return ""
        if callable(self.key):
            return str(self.key(*args))
        names = self._param_names(self._tuner(_current_device() if device is None else device))
        parts = []
        for name in self.key:
            if name not in names:
                raise ValueError("key %r is not a parameter of the kernel (it has: %s)" % (name, ", ".join(names)))
            i = names.index(name)
            if i >= len(args):
                raise TypeError("the kernel takes %d arguments (%s), %d given" % (len(names), ", ".join(names),
                                                                                   len(args)))
            a = args[i]
            if _is_tensor(a):
                parts.append("%s=%s:%s" % (name, "x".join(str(int(s)) for s in a.shape), tile_dtype_of(a)))
            elif isinstance(a, (bool, int, float, str)):
                parts.append("%s=%r" % (name, a))
            else:
                raise TypeError("key parameter %s is a %s: key on scalar or tensor parameters, or pass key= a "
                                "callable of the arguments" % (name, type(a).__name__))
        return ",".join(parts)

    # -- launching -----------------------------------------------------------------
    def __getitem__(self, grid):
        return lambda *args, **kw: self.launch(grid, *args, **kw)

    def launch(self, grid, *args, stream=None):
        device = _args_device(args)
        staged = _Staging() if _emulated_cpu(args) else None
        if device is None:
            device = _current_device() if staged is None else 0
        t = self._tuner(device)
        key = self.key_of(args, device)
        call = _Call(grid, args, staged)
        st = _lib.TileJitAutotuneStats()
        ok = False
        self._tls.call = call
        try:
            s = _stream_handle(stream, device, args)
            status = _lib.jit().tile_jit_autotune_launch(t, key.encode(), self._launch_cb, None, s, C.byref(st))
            self.last_stats = {"config": st.config, "tuned": bool(st.tuned), "from_disk": bool(st.from_disk),
                               "ntimed": st.ntimed, "nskipped": st.nskipped, "best_ms": st.best_ms,
                               "key": st.key.decode(), "notes": st.notes.decode(errors="replace")}
            if status != TILE_OK and call.errors and len(call.errors) >= st.nskipped:
                raise call.errors[0]  # every failure was the arguments' (a TypeError, ...)
            check(status, "tile_jit_autotune_launch(%s, key %r)" % (self.name or self.filename, key))
            ok = True
        finally:
            self._tls.call = None
            if staged is not None:
                staged.finish(ok=ok)

    def _on_launch(self, user, k, config, stream):
        """The C tuner's callback: launch config `config`'s kernel k once."""
        call = self._tls.call
        try:
            prep = call.prepared.get(config)
            if prep is None:
                info = self._info(k)
                if len(call.args) != len(info.params):
                    raise TypeError("%s takes %d arguments (%s), %d given" % (
                        info.name, len(info.params), ", ".join(p.name for p in info.params), len(call.args)))
                meta = dict(self.constants)
                meta.update(self.configs[config])
                grid = grid_of(call.grid, meta)
                values = [convert_arg(info.name, p, a, k, call.staged) for p, a in zip(info.params, call.args)]
                ptrs = (C.c_void_p * len(values))(*[v.address if isinstance(v, TmaDesc) else C.addressof(v)
                                                    for v in values])
                prep = call.prepared[config] = (grid, values, ptrs)
            grid, values, ptrs = prep
            if 0 in grid:
                return TILE_OK
            return _lib.rt().tile_launch(k, grid[0], grid[1], grid[2], ptrs, len(values), stream)
        except BaseException as e:  # back to C as a status; launch() re-raises it
            call.errors.append(e)
            msg = ("%s: %s" % (type(e).__name__, e)).encode(errors="replace")
            _lib.rt().tile_set_error(C.c_int(TILE_ERR_INVALID), b"%s", C.c_char_p(msg))
            return TILE_ERR_INVALID

    def _on_clock(self, user):
        """The C tuner's clock: the caller's, in ms (NaN when it raises: that
        config fails, and launch() re-raises the exception)."""
        try:
            return float(self._clock())
        except BaseException as e:
            call = getattr(self._tls, "call", None)
            if call is not None:
                call.errors.append(e)
            return float("nan")

    def best(self, *args, device=None):
        """The choice for the key of these arguments: (index, config dict,
        [median ms per config, None for one skipped]), or None when the key
        is not tuned yet (neither in memory nor on disk)."""
        device = _current_device() if device is None else device
        t = self._tuner(device)
        key = self.key_of(args, device)
        best = C.c_int(-1)
        ms = (C.c_double * len(self.configs))()
        st = _lib.jit().tile_jit_autotune_best(t, key.encode(), C.byref(best), ms)
        if st == _lib.TILE_ERR_NOT_FOUND:
            return None
        check(st, "tile_jit_autotune_best")
        return best.value, dict(self.configs[best.value]), [m if m >= 0 else None for m in ms]


def autotune(source_or_path, name=None, *, configs, key=None, constants=None, options=None, warmup=None, reps=None,
             clock=None, filename=None):
    """tile.Autotuner(...): see its documentation."""
    return Autotuner(source_or_path, name, configs, key, constants, options, warmup=warmup, reps=reps, clock=clock,
                     filename=filename)
