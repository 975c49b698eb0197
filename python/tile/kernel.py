"""tile.Kernel: JIT-compile a Tile kernel (libtilejit, with its disk cache)
and launch it on torch tensors, Triton-style:

    add = tile.Kernel("examples/vector_add/vector_add.tile", "vector_add", constants={"BLOCK": 1024})
    add[(n + 1023) // 1024,](x, y, out, n)

Arguments follow the kernel's parameters (its metadata, docs/metadata.md):
a pointer parameter takes a tensor (its data_ptr; the dtype must match), a
DeviceBuffer or an int address; a scalar parameter takes a Python number,
converted to the declared type (range-checked); a tma<...> parameter takes a
2-D tensor (or any tensor whose leading dimensions collapse into rows: rows
x last dimension, the last dimension contiguous), turned into a TMA
descriptor by tile_tma_desc_2d, or a TmaDesc. `const` parameters are not
arguments: they are `constants`, compiled in.
"""
import ctypes as C
import os
import sys
import threading

from . import _lib
from ._lib import (TILE_PARAM_PTR, TILE_PARAM_SCALAR, TILE_PARAM_TMA, TMA_DESC_BYTES, TileError, check)

# C scalar types of Tile's dtypes (16-bit floats travel as their bits)
_SCALAR = {
    "i8": C.c_int8, "u8": C.c_uint8, "i16": C.c_int16, "u16": C.c_uint16, "i32": C.c_int32, "u32": C.c_uint32,
    "i64": C.c_int64, "u64": C.c_uint64, "f32": C.c_float, "f64": C.c_double, "bool": C.c_uint8, "i1": C.c_uint8,
}
_INT_RANGE = {"i8": (-2**7, 2**7 - 1), "u8": (0, 2**8 - 1), "i16": (-2**15, 2**15 - 1), "u16": (0, 2**16 - 1),
              "i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1), "i64": (-2**63, 2**63 - 1), "u64": (0, 2**64 - 1)}

# torch dtype name -> Tile dtype name
_TORCH_DTYPE = {"float32": "f32", "float64": "f64", "bfloat16": "bf16", "float16": "f16", "int8": "i8",
                "uint8": "u8", "int16": "i16", "int32": "i32", "int64": "i64", "uint16": "u16", "uint32": "u32",
                "uint64": "u64", "bool": "i1", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}


def tile_dtype_of(t):
    """The Tile dtype name of a torch tensor ("bf16", "f32", ...)."""
    return _TORCH_DTYPE.get(str(t.dtype).replace("torch.", ""), str(t.dtype))


def _is_tensor(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr") and hasattr(x, "stride")


def _half_bits(value, dtype):
    import struct
    f = struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if dtype == "bf16":
        if (f & 0x7f800000) == 0x7f800000 and (f & 0x7fffff):
            return 0x7fc0 | ((f >> 16) & 0x8000)
        return ((f + 0x7fff + ((f >> 16) & 1)) >> 16) & 0xffff
    return struct.unpack("<H", struct.pack("<e", float(value)))[0]


class KernelParam:
    """One parameter from the kernel's metadata."""

    KINDS = {TILE_PARAM_PTR: "ptr", TILE_PARAM_SCALAR: "scalar", TILE_PARAM_TMA: "tma"}

    def __init__(self, index, info):
        self.index = index
        self.name = info.name.decode()
        self.kind = self.KINDS.get(info.kind, "kind %d" % info.kind)
        self.dtype = info.dtype.decode()
        self.size = info.size
        self.align = info.align
        self.multiple = info.multiple
        self.box = (info.box[0], info.box[1])
        self.swizzle = info.swizzle

    def __repr__(self):
        extra = ", box=%s, swizzle=%d" % (self.box, self.swizzle) if self.kind == "tma" else ""
        return "KernelParam(%s: %s %s%s)" % (self.name, self.kind, self.dtype, extra)


class KernelInfo:
    """A kernel's metadata: name, threads, smem_bytes, cluster, params."""

    def __init__(self, ki):
        self.name = ki.name.decode()
        self.threads = ki.threads
        self.smem_bytes = ki.smem_bytes
        self.cluster = (ki.cluster[0], ki.cluster[1], ki.cluster[2])
        self.params = [KernelParam(i, ki.params[i]) for i in range(ki.nparams)]

    def __repr__(self):
        return "KernelInfo(%s, threads=%d, smem_bytes=%d, cluster=%s, params=%s)" % (
            self.name, self.threads, self.smem_bytes, self.cluster, self.params)


def cubin_kernels(cubin):
    """The KernelInfo of every kernel in a cubin's metadata (no driver needed)."""
    rt = _lib.rt()
    buf = C.create_string_buffer(bytes(cubin), len(cubin))
    n = C.c_size_t()
    text = rt.tile_cubin_find_meta(buf, len(cubin), C.byref(n))
    if not text:
        raise TileError(_lib.TILE_ERR_BAD_MODULE, "the cubin has no Tile metadata (__tile_meta)", "tile_cubin_find_meta")
    err = C.create_string_buffer(512)
    meta = rt.tile_meta_parse(C.c_char_p(text), n.value, err, len(err))
    if not meta:
        raise TileError(_lib.TILE_ERR_BAD_MODULE, "bad __tile_meta: " + err.value.decode(errors="replace"),
                        "tile_meta_parse")
    try:
        return [KernelInfo(rt.tile_meta_kernel(meta, i).contents) for i in range(rt.tile_meta_num_kernels(meta))]
    finally:
        rt.tile_meta_free(meta)


class TmaDesc:
    """A TMA descriptor (tile_tma_desc: 128 bytes, 64-byte aligned) for one
    kernel parameter, over a row-major 2-D region."""

    def __init__(self):
        self._buf = C.create_string_buffer(TMA_DESC_BYTES + 64)
        self.address = (C.addressof(self._buf) + 63) & ~63
        self.keep = None  # what the descriptor points into

    def value(self):
        return (C.c_ubyte * TMA_DESC_BYTES).from_address(self.address)


class JitOptions:
    """tile_jit_options, as keyword arguments (docs/runtime.md):
    arch (None: the device's), cache_dir, no_cache, opt_level (0..3),
    include_dirs, no_line_info, tree_reductions, no_stmatrix, embed_ptx,
    use_nvjitlink, ptxas, max_errors, stats (the compile report of tilec
    --stats in the stats dict's "report"; compiles even on a cache hit),
    no_tma_rings (tilec --no-tma-rings), tma_rings_all (--tma-rings=all),
    no_smem_home (--no-smem-home), no_wide_stores (--no-wide-stores)."""

    FIELDS = ("arch", "cache_dir", "no_cache", "opt_level", "include_dirs", "no_line_info", "tree_reductions",
              "no_stmatrix", "embed_ptx", "use_nvjitlink", "ptxas", "max_errors", "stats", "no_tma_rings",
              "tma_rings_all", "no_smem_home", "no_wide_stores")

    def __init__(self, **kw):
        for k in kw:
            if k not in self.FIELDS:
                raise TypeError("unknown JIT option %r (known: %s)" % (k, ", ".join(self.FIELDS)))
        self.arch = kw.get("arch")
        self.cache_dir = kw.get("cache_dir")
        self.no_cache = bool(kw.get("no_cache", False))
        self.opt_level = kw.get("opt_level")
        self.include_dirs = list(kw.get("include_dirs") or [])
        self.no_line_info = bool(kw.get("no_line_info", False))
        self.tree_reductions = bool(kw.get("tree_reductions", False))
        self.no_stmatrix = bool(kw.get("no_stmatrix", False))
        self.no_tma_rings = bool(kw.get("no_tma_rings", False))
        self.tma_rings_all = bool(kw.get("tma_rings_all", False))
        self.no_smem_home = bool(kw.get("no_smem_home", False))
        self.no_wide_stores = bool(kw.get("no_wide_stores", False))
        self.embed_ptx = bool(kw.get("embed_ptx", False))
        self.use_nvjitlink = bool(kw.get("use_nvjitlink", False))
        self.ptxas = kw.get("ptxas")
        self.max_errors = int(kw.get("max_errors") or 0)
        self.stats = bool(kw.get("stats", False))
        if self.opt_level is not None and self.opt_level not in (0, 1, 2, 3):
            raise ValueError("opt_level must be 0, 1, 2 or 3 (None: the default, 3), not %r" % (self.opt_level,))

    def c_struct(self, defines):
        """The TileJitOptions and what its pointers point at (keep it alive)."""
        keep = []
        o = _lib.TileJitOptions()

        def s(x):
            if x is None:
                return None
            b = os.fsencode(x) if not isinstance(x, bytes) else x
            keep.append(b)
            return b
        o.arch = s(self.arch)
        o.cache_dir = s(self.cache_dir)
        o.no_cache = int(self.no_cache)
        o.opt_level = {None: 0, 0: _lib.TILE_JIT_O0}.get(self.opt_level, self.opt_level)
        if self.include_dirs:
            arr = (C.c_char_p * len(self.include_dirs))(*[s(d) for d in self.include_dirs])
            keep.append(arr)
            o.include_dirs = arr
            o.ninclude_dirs = len(self.include_dirs)
        o.no_line_info = int(self.no_line_info)
        o.tree_reductions = int(self.tree_reductions)
        o.no_stmatrix = int(self.no_stmatrix)
        o.no_tma_rings = int(self.no_tma_rings)
        o.tma_rings_all = int(self.tma_rings_all)
        o.no_smem_home = int(self.no_smem_home)
        o.no_wide_stores = int(self.no_wide_stores)
        o.embed_ptx = int(self.embed_ptx)
        o.use_nvjitlink = int(self.use_nvjitlink)
        o.ptxas = s(self.ptxas)
        o.max_errors = self.max_errors
        o.stats = int(self.stats)
        if defines:
            arr = (_lib.TileJitDefine * len(defines))()
            for i, (k, v) in enumerate(defines):
                arr[i].name = s(k)
                arr[i].value = s(v)
            keep.append(arr)
            o.defines = arr
            o.ndefines = len(defines)
        return o, keep


def _const_text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return v
    raise TypeError("constant values are bool, int, float or str, not %s" % type(v).__name__)


def compile_cubin(source, filename="<source>", constants=None, options=None):
    """Compile Tile source (or fetch it from the JIT's disk cache) to a cubin:
    (bytes, stats dict). A compile error raises TileCompileError with the
    diagnostics."""
    if isinstance(options, dict):
        options = JitOptions(**options)
    options = options or JitOptions()
    if options.arch is None:
        # the current device's (the emulator says sm_90a)
        _lib.init(_current_device())
    defines = [(str(k), _const_text(v)) for k, v in (constants or {}).items()]
    o, keep = options.c_struct(defines)
    src = source.encode() if isinstance(source, str) else bytes(source)
    out = C.c_void_p()
    size = C.c_size_t()
    st = _lib.TileJitStats()
    j = _lib.jit()
    status = j.tile_jit_compile_cubin(os.fsencode(filename), src, len(src), C.byref(o), C.byref(out), C.byref(size),
                                      C.byref(st))
    del keep
    report = None
    if st.report:
        report = C.string_at(st.report).decode(errors="replace")
        _libc_free(st.report)
    check(status, "tile_jit_compile_cubin(%s)" % filename)
    try:
        cubin = C.string_at(out, size.value)
    finally:
        _libc_free(out)
    return cubin, {"cache_hit": bool(st.cache_hit), "cache_rebuilt": bool(st.cache_rebuilt),
                   "compile_seconds": st.compile_seconds, "key": st.key.decode(), "report": report}


_libc = None


def _libc_free(p):
    global _libc
    if _libc is None:
        _libc = C.CDLL(None)
        _libc.free.argtypes = [C.c_void_p]
        _libc.free.restype = None
    _libc.free(p)


def _current_device():
    try:
        import torch
        if torch.cuda.is_available():
            return torch.cuda.current_device()
    except ImportError:
        pass
    return 0


def _looks_like_path(x):
    if isinstance(x, os.PathLike):
        return True
    return isinstance(x, str) and "\n" not in x and x.endswith(".tile")


class Kernel:
    """A Tile kernel compiled by the JIT (or loaded from a cubin), launched as
    kernel[grid](*args, stream=None, smem=None, cluster=None).

    source_or_path: Tile source text, or the path of a .tile file (its folder
    is searched by `import` first, as tilec does). name: the kernel (None:
    the module's only one). constants: {name: value} for the kernel's
    `const` parameters (tilec -D). options: a JitOptions or a dict of its
    fields (arch, include_dirs, opt_level, no_cache, cache_dir, ...).

    Compiles at construction: a compile error raises TileCompileError whose
    message is the Tile diagnostics. The module is loaded on each device at
    its first launch there.
    """

    def __init__(self, source_or_path, name=None, constants=None, options=None, *, filename=None, specialize=True):
        if _looks_like_path(source_or_path):
            path = os.fspath(source_or_path)
            with open(path, "rb") as f:
                source = f.read()
            filename = filename or path
        else:
            source = source_or_path
            filename = filename or "<source>"
        self.filename = filename
        self.constants = dict(constants or {})
        self.cubin, self.stats = compile_cubin(source, filename, self.constants, options)
        self._setup(name)
        # Triton's specialization: an integer argument divisible by 16 gets
        # a build that knows it (-D NAME=multiple_of(16): whole-vector
        # masks, 16-byte copies), compiled at the first launch that has it
        self._source, self._options, self._specialize = source, options, specialize
        self._variants = {}

    @classmethod
    def from_cubin(cls, path_or_bytes, name=None):
        """A kernel from a cubin tilec wrote (no JIT needed)."""
        self = cls.__new__(cls)
        if isinstance(path_or_bytes, (bytes, bytearray)):
            self.cubin = bytes(path_or_bytes)
            self.filename = "<cubin>"
        else:
            with open(path_or_bytes, "rb") as f:
                self.cubin = f.read()
            self.filename = os.fspath(path_or_bytes)
        self.constants = {}
        self.stats = None
        self._setup(name)
        self._specialize = False  # a cubin is what it is
        return self

    def _setup(self, name):
        kernels = cubin_kernels(self.cubin)
        names = [k.name for k in kernels]
        if name is None:
            if len(kernels) != 1:
                raise ValueError("%s has %d kernels (%s): name the one to launch" % (self.filename, len(kernels),
                                                                                     ", ".join(names)))
            self.info = kernels[0]
        else:
            match = [k for k in kernels if k.name == name]
            if not match:
                raise ValueError("no kernel named %r in %s (it has: %s)" % (name, self.filename, ", ".join(names)))
            self.info = match[0]
        self.name = self.info.name
        self.params = self.info.params
        self._modules = {}  # device ordinal -> (module handle, kernel handle)
        self._lock = threading.Lock()
        self._fast = _fast_plan(self.params)
        # the integer parameters a specialized build may promise multiple_of(16) (specialized())
        self._spec_ints = tuple(p.index for p in self.params if p.kind == "scalar" and p.dtype in self._INT_DTYPES and
                                p.multiple % 16 != 0)

    def __repr__(self):
        return "<tile.Kernel %s from %s: %d threads, %d bytes smem, params %s>" % (
            self.name, self.filename, self.info.threads, self.info.smem_bytes,
            ", ".join("%s: %s %s" % (p.name, p.kind, p.dtype) for p in self.params))

    # -- loading ----------------------------------------------------------------
    def _kernel_handle(self, device):
        with self._lock:
            if device in self._modules:
                return self._modules[device][1]
            _lib.init(device)
            rt = _lib.rt()
            mod = C.c_void_p()
            buf = C.create_string_buffer(self.cubin, len(self.cubin))
            check(rt.tile_module_load_data(buf, len(self.cubin), C.byref(mod)), "tile_module_load_data(%s)" %
                  self.filename)
            k = C.c_void_p()
            st = rt.tile_module_get_kernel(mod, self.name.encode(), C.byref(k))
            if st != 0:
                msg = _lib.last_error()
                rt.tile_module_unload(mod)
                raise _lib._error_class(st)(st, msg, "tile_module_get_kernel(%s)" % self.name)
            self._modules[device] = (mod, k)
            return k

    def __del__(self):
        try:
            for mod, _ in getattr(self, "_modules", {}).values():
                _lib.rt().tile_module_unload(mod)
        except Exception:
            pass

    # -- launching --------------------------------------------------------------
    def __getitem__(self, grid):
        return lambda *args, **kw: self.launch(grid, *args, **kw)

    def tma_desc(self, param, tensor, rows=None, cols=None, row_stride=None, device=None):
        """The TMA descriptor for parameter `param` (name or index) over
        `tensor` (rows x cols elements, row_stride apart; by default from
        its shape: the leading dimensions are the rows)."""
        p = self._param(param)
        if p.kind != "tma":
            raise TypeError("parameter %s of %s is a %s, not a tma<...>" % (p.name, self.name, p.kind))
        ptr, r, c, rs, dev = _tma_geometry(p, self.name, tensor, rows, cols, row_stride)
        if device is None:
            device = dev if dev is not None else _current_device()
        k = self._kernel_handle(device)
        d = TmaDesc()
        check(_lib.rt().tile_tma_desc_2d(C.c_void_p(d.address), k, p.index, ptr, r, c, rs),
              "tile_tma_desc_2d(%s.%s)" % (self.name, p.name))
        d.keep = tensor
        d.param = p.index
        return d

    def _param(self, param):
        if isinstance(param, int):
            return self.params[param]
        for p in self.params:
            if p.name == param:
                return p
        raise KeyError("%s has no parameter %r" % (self.name, param))

    _INT_DTYPES = ("i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64")

    def specialized(self, *args):
        """The kernel that a launch with these arguments runs: this one, or
        (specialize=True, the default for kernels compiled from source) the
        build that assumes multiple_of(16) of each integer argument that is
        a multiple of 16 and not already promised so (compiled once per set
        of such parameters, through the JIT's cache)."""
        if not getattr(self, "_specialize", False) or len(args) != len(self.params):
            return self
        names = tuple(p.name for p, a in zip(self.params, args)
                      if p.kind == "scalar" and p.dtype in self._INT_DTYPES and isinstance(a, int) and
                      not isinstance(a, bool) and a % 16 == 0 and p.multiple % 16 != 0)
        if not names:
            return self
        with self._lock:
            k = self._variants.get(names)
            if k is None:
                consts = dict(self.constants)
                consts.update((n, "multiple_of(16)") for n in names)
                k = Kernel(self._source, self.name, consts, self._options, filename=self.filename, specialize=False)
                k.constants = self.constants  # the grid function sees the kernel's own constants
                self._variants[names] = k
        return k

    def launch(self, grid, *args, stream=None, smem=None, cluster=None):
        if smem is None and cluster is None and self._fast is not None and self._launch_fast(grid, args, stream):
            return
        v = self.specialized(*args)
        if v is not self:
            return v.launch(grid, *args, stream=stream, smem=smem, cluster=cluster)
        info = self.info
        grid = grid_of(grid, self.constants)
        if smem is not None and smem != info.smem_bytes:
            raise ValueError("%s: its shared memory is fixed by the compiler (%d bytes, in its metadata), not %r" %
                             (self.name, info.smem_bytes, smem))
        if cluster is not None:
            cl = (cluster,) if isinstance(cluster, int) else tuple(cluster)
            cl = cl + (1,) * (3 - len(cl))
            if cl != info.cluster:
                raise ValueError("%s: its cluster shape is fixed by the kernel (%s, in its metadata), not %r" %
                                 (self.name, info.cluster, cluster))
        if len(args) != len(self.params):
            raise TypeError("%s takes %d arguments (%s), %d given" % (
                self.name, len(self.params), ", ".join(p.name for p in self.params), len(args)))
        device = _args_device(args)
        staged = _Staging() if _emulated_cpu(args) else None
        if device is None:
            device = _current_device() if staged is None else 0
        ok = False
        try:
            k = self._kernel_handle(device)
            values = [self._convert(p, a, k, staged) for p, a in zip(self.params, args)]
            if 0 in grid:
                ok = True
                return
            ptrs = (C.c_void_p * len(values))(*[v.address if isinstance(v, TmaDesc) else C.addressof(v)
                                                for v in values])
            s = _stream_handle(stream, device, args)
            check(_lib.rt().tile_launch(k, grid[0], grid[1], grid[2], ptrs, len(values), s),
                  "tile_launch(%s, grid %s)" % (self.name, grid))
            ok = True
        finally:
            if staged is not None:
                staged.finish(ok=ok)

    def _convert(self, p, a, k, staged):
        return convert_arg(self.name, p, a, k, staged)

    def _launch_fast(self, grid, args, stream):
        """The common launch (CUDA tensors, DeviceBuffers, int addresses,
        in-range ints, floats; a tuple or int grid) with no per-argument
        messages built and one pass over the arguments. False, having done
        nothing, for anything else: launch() then takes the checked path,
        which says what is wrong."""
        if len(args) != len(self.params):
            return False
        if type(grid) is int and grid > 0:
            grid = (grid, 1, 1)
        elif type(grid) is tuple and 1 <= len(grid) <= 3 and all(type(g) is int and g > 0 for g in grid):
            grid = grid + (1,) * (3 - len(grid))
        else:
            return False
        torch = sys.modules.get("torch")
        tensor = torch.Tensor if torch is not None else ()
        vals = []
        device = None
        for (kind, ct, dt, mult, lo, hi), a in zip(self._fast, args):
            ta = type(a)
            if kind == _F_PTR:
                if ta is int:
                    vals.append(C.c_uint64(a))
                elif ta is _lib.DeviceBuffer:
                    vals.append(C.c_uint64(a.ptr))
                elif isinstance(a, tensor):
                    dev = a.device
                    if dev.type != "cuda" or dev.index is None or (dt and _TORCH_TO_TILE.get(a.dtype) != dt):
                        return False
                    if device is None:
                        device = dev.index
                    elif device != dev.index:
                        return False
                    vals.append(C.c_uint64(a.data_ptr()))
                else:
                    return False
            elif kind == _F_INT:
                if ta is not int or not lo <= a <= hi or (mult > 1 and a % mult):
                    return False
                vals.append(ct(a))
            elif kind == _F_FLOAT:
                if ta is not float and ta is not int:
                    return False
                vals.append(ct(a))
            else:
                return False
        spec = self._spec_ints if getattr(self, "_specialize", False) else ()
        if spec and any(type(args[i]) is int and args[i] % 16 == 0 for i in spec):
            return False  # a specialized build runs it (launch() finds it)
        if device is None:
            if stream is not None:
                return False
            device = _current_device()
            s = None
        elif stream is None:
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            s = C.c_void_p(raw(device) if raw else torch.cuda.current_stream(device).cuda_stream)
        elif hasattr(stream, "cuda_stream"):
            s = C.c_void_p(stream.cuda_stream)
        else:
            return False
        mk = self._modules.get(device)
        k = mk[1] if mk is not None else self._kernel_handle(device)
        ptrs = (C.c_void_p * len(vals))(*[C.addressof(v) for v in vals])
        st = _lib.rt().tile_launch(k, grid[0], grid[1], grid[2], ptrs, len(vals), s)
        if st != 0:
            check(st, "tile_launch(%s, grid %s)" % (self.name, grid))
        return True


_F_PTR, _F_INT, _F_FLOAT, _F_OTHER = range(4)
_TORCH_TO_TILE = {}


def _fast_plan(params):
    """Per parameter, what _launch_fast needs: (kind, ctypes type, dtype,
    multiple, lo, hi); None when the torch dtype table cannot be built."""
    torch = sys.modules.get("torch")
    if torch is not None and not _TORCH_TO_TILE:
        for name, td in _TORCH_DTYPE.items():
            d = getattr(torch, name, None)
            if d is not None:
                _TORCH_TO_TILE[d] = td
    plan = []
    for p in params:
        if p.kind == "ptr":
            plan.append((_F_PTR, None, p.dtype, 1, 0, 0))
        elif p.kind == "scalar" and p.dtype in _INT_RANGE and C.sizeof(_SCALAR[p.dtype]) == p.size:
            lo, hi = _INT_RANGE[p.dtype]
            plan.append((_F_INT, _SCALAR[p.dtype], p.dtype, p.multiple, lo, hi))
        elif p.kind == "scalar" and p.dtype in ("f32", "f64") and C.sizeof(_SCALAR[p.dtype]) == p.size:
            plan.append((_F_FLOAT, _SCALAR[p.dtype], p.dtype, 1, 0, 0))
        else:
            plan.append((_F_OTHER, None, p.dtype, 1, 0, 0))
    return plan


def grid_of(grid, constants):
    """A launch grid as 3 ints: grid is an int, 1 to 3 ints, or a callable
    given the constants dict (Triton's META)."""
    if callable(grid):
        grid = grid(dict(constants))
    if isinstance(grid, int):
        grid = (grid,)
    grid = tuple(int(g) for g in grid)
    if not 1 <= len(grid) <= 3 or any(g < 0 for g in grid):
        raise ValueError("grid must be 1 to 3 non-negative sizes, not %r" % (grid,))
    return grid + (1,) * (3 - len(grid))


def convert_arg(kname, p, a, k, staged):
    """Argument `a` for parameter p of kernel handle k (named kname), as the
    ctypes value tile_launch takes (a TmaDesc for a tma<...> parameter);
    staged: the emulator's _Staging of CPU tensors, or None."""
    what = "%s: parameter %d (%s: %s %s)" % (kname, p.index, p.name, p.kind, p.dtype)
    if p.kind == "ptr":
        if a is None:
            return C.c_uint64(0)
        if _is_tensor(a):
            td = tile_dtype_of(a)
            if p.dtype and td != p.dtype:
                raise TypeError("%s: a %s tensor, the kernel reads %s" % (what, td, p.dtype))
            if staged is not None:
                return C.c_uint64(staged.device_ptr(a))
            _check_device_tensor(a, what)
            return C.c_uint64(a.data_ptr())
        if isinstance(a, _lib.DeviceBuffer):
            return C.c_uint64(a.ptr)
        if isinstance(a, int) and not isinstance(a, bool):
            return C.c_uint64(a)
        raise TypeError("%s takes a tensor, a DeviceBuffer or an int address, not %s" % (what, type(a).__name__))
    if p.kind == "scalar":
        if _is_tensor(a):
            if a.numel() != 1:
                raise TypeError("%s takes a number, not a tensor of %d elements" % (what, a.numel()))
            a = a.item()
        if p.dtype in ("bf16", "f16"):
            return C.c_uint16(_half_bits(a, p.dtype))
        ct = _SCALAR.get(p.dtype)
        if ct is None or C.sizeof(ct) != p.size:
            raise TypeError("%s: scalar type %s (%d bytes) is not supported here" % (what, p.dtype, p.size))
        if p.dtype in _INT_RANGE:
            if isinstance(a, float) and not a.is_integer():
                raise TypeError("%s takes an integer, not %r" % (what, a))
            try:
                a = int(a)
            except (TypeError, ValueError):
                raise TypeError("%s takes an integer, not %s" % (what, type(a).__name__))
            lo, hi = _INT_RANGE[p.dtype]
            if not lo <= a <= hi:
                raise OverflowError("%s: %d is out of range for %s" % (what, a, p.dtype))
            if p.multiple > 1 and a % p.multiple:
                raise ValueError("%s: the kernel assumes a multiple of %d, not %d" % (what, p.multiple, a))
        elif p.dtype in ("bool", "i1"):
            a = 1 if a else 0
        else:
            a = float(a)
        return ct(a)
    if p.kind == "tma":
        if isinstance(a, TmaDesc):
            return a
        if not _is_tensor(a):
            raise TypeError("%s takes a tensor or a TmaDesc, not %s" % (what, type(a).__name__))
        if staged is not None:
            a = staged.device_view(a)
        else:
            _check_device_tensor(a, what)
        ptr, r, c, rs, _ = _tma_geometry(p, kname, a)
        d = TmaDesc()
        check(_lib.rt().tile_tma_desc_2d(C.c_void_p(d.address), k, p.index, ptr, r, c, rs),
              "tile_tma_desc_2d(%s.%s)" % (kname, p.name))
        d.keep = a
        return d
    raise TypeError("%s: parameter kind %s is not supported" % (what, p.kind))


def _tma_geometry(p, kname, t, rows=None, cols=None, row_stride=None):
    """(address, rows, cols, row_stride, device) of a tensor for a TMA parameter."""
    what = "%s: parameter %d (%s: tma<%s, %s>)" % (kname, p.index, p.name, p.dtype, list(p.box))
    if isinstance(t, _StagedView):
        ptr, shape, strides, dev, td = t.ptr, t.shape, t.strides, None, t.dtype
    else:
        ptr, shape, strides, td = t.data_ptr(), tuple(t.shape), tuple(t.stride()), tile_dtype_of(t)
        dev = t.device.index if t.device.type == "cuda" else None
    if td != p.dtype:
        raise TypeError("%s: a %s tensor, the descriptor is %s" % (what, td, p.dtype))
    if len(shape) < 1:
        raise ValueError("%s: a 0-d tensor" % what)
    if cols is None:
        if strides[-1] != 1 and shape[-1] != 1:
            raise ValueError("%s: the last dimension must be contiguous (stride %d)" % (what, strides[-1]))
        cols = shape[-1]
    if rows is None:
        rows = 1
        for s in shape[:-1]:
            rows *= s
    if row_stride is None:
        if len(shape) == 1:
            row_stride = cols
        else:
            row_stride = strides[-2]
            # leading dimensions must collapse into one of stride row_stride
            expect = row_stride
            for i in range(len(shape) - 2, -1, -1):
                if shape[i] != 1 and strides[i] != expect:
                    raise ValueError("%s: dimensions %s with strides %s do not collapse into rows; pass rows, cols "
                                     "and row_stride to tma_desc" % (what, shape, strides))
                expect *= shape[i]
    return ptr, int(rows), int(cols), int(row_stride), dev


def _check_device_tensor(t, what):
    if t.device.type != "cuda":
        if t.device.type == "cpu" and _lib.interpreting():
            return
        raise ValueError("%s: a %s tensor; Tile kernels run on CUDA tensors (CPU tensors only under "
                         "TILE_INTERPRET=1, the emulator)" % (what, t.device.type))


def _args_device(args):
    """The CUDA device of the tensor arguments (one device for all of them)."""
    devs = set()
    for a in args:
        if _is_tensor(a) and a.device.type == "cuda":
            devs.add(a.device.index if a.device.index is not None else _current_device())
    if len(devs) > 1:
        raise ValueError("the tensor arguments are on several devices (cuda:%s)" % ", cuda:".join(map(str, sorted(devs))))
    return devs.pop() if devs else None


def _emulated_cpu(args):
    return _lib.interpreting() and any(_is_tensor(a) and a.device.type == "cpu" for a in args)


def _stream_handle(stream, device, args):
    if stream is None:
        if any(_is_tensor(a) and a.device.type == "cuda" for a in args):
            import torch
            return C.c_void_p(torch.cuda.current_stream(device).cuda_stream)
        return None
    if hasattr(stream, "cuda_stream"):
        return C.c_void_p(stream.cuda_stream)
    return C.c_void_p(int(stream))


class _StagedView:
    def __init__(self, ptr, shape, strides, dtype):
        self.ptr, self.shape, self.strides, self.dtype = ptr, shape, strides, dtype


class _Staging:
    """Under TILE_INTERPRET=1, CPU tensors are copied into emulator memory
    (tile_malloc: the emulator checks every access against its allocations)
    before the launch and copied back after it: the bytes a tensor spans
    (from its first to its last element, gaps between strided rows
    included), so its strides, and a TMA row pitch, stay as they are."""

    def __init__(self):
        self.bufs = []  # (tensor, DeviceBuffer, bytes)
        self.by_ptr = {}

    def _stage(self, t):
        if any(s < 0 for s in t.stride()):
            raise ValueError("a tensor with negative strides cannot be staged for the emulator")
        key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()))
        if key in self.by_ptr:
            return self.by_ptr[key]
        span = 0 if t.numel() == 0 else (1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride())))
        nbytes = span * t.element_size()
        buf = _lib.DeviceBuffer(max(nbytes, 16))
        if nbytes:
            buf.upload(t.data_ptr(), nbytes)
        entry = (t, buf, nbytes)
        self.bufs.append(entry)
        self.by_ptr[key] = entry
        return entry

    def device_ptr(self, t):
        return self._stage(t)[1].ptr

    def device_view(self, t):
        _, buf, _ = self._stage(t)
        return _StagedView(buf.ptr, tuple(t.shape), tuple(t.stride()), tile_dtype_of(t))

    def finish(self, ok=True):
        for t, buf, nbytes in self.bufs:
            if ok and nbytes:
                buf.download(t.data_ptr(), nbytes)
            buf.free()
        self.bufs = []
