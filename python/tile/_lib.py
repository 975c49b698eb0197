"""ctypes bindings of Tile's C libraries: libtilert (the runtime), libjfa
(Jagged Flash Attention's host API) and libtilejit (the JIT), found as
docs/python.md says, loaded on first use.

Nothing here imports torch. Every C call that fails raises TileError (or a
subclass) carrying the status and tile_last_error()'s message.
"""
import ctypes as C
import os
import shutil
import subprocess
import threading

# ---- errors -------------------------------------------------------------------

STATUS_NAMES = ["TILE_OK", "TILE_ERR_NO_DRIVER", "TILE_ERR_NO_DEVICE", "TILE_ERR_CUDA", "TILE_ERR_INVALID",
                "TILE_ERR_NOT_FOUND", "TILE_ERR_BAD_MODULE", "TILE_ERR_COMPILE", "TILE_ERR_IO", "TILE_ERR_NOMEM"]
TILE_OK, TILE_ERR_NO_DRIVER, TILE_ERR_NO_DEVICE, TILE_ERR_CUDA, TILE_ERR_INVALID, TILE_ERR_NOT_FOUND, \
    TILE_ERR_BAD_MODULE, TILE_ERR_COMPILE, TILE_ERR_IO, TILE_ERR_NOMEM = range(10)


class TileError(RuntimeError):
    """A Tile C call failed: .status (the tile_status number), .status_name,
    .message (tile_last_error()'s text) and .call (the function)."""

    def __init__(self, status, message, call=""):
        self.status = status
        self.status_name = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else "status %d" % status
        self.message = message
        self.call = call
        where = call + ": " if call else ""
        super().__init__("%s%s: %s" % (where, self.status_name, message))


class TileInvalidArgument(TileError, ValueError):
    """TILE_ERR_INVALID: the C library refused an argument (nothing was launched)."""


class TileCompileError(TileError):
    """TILE_ERR_COMPILE: the Tile source did not compile; .diagnostics holds
    the compiler's messages (file:line:col: error: ...)."""

    @property
    def diagnostics(self):
        return self.message


class LibraryNotFound(OSError):
    """A Tile shared library could not be found or loaded (docs/python.md:
    TILE_LIB_DIR, the repository's build/lib, pkg-config)."""


def _error_class(status):
    if status == TILE_ERR_INVALID:
        return TileInvalidArgument
    if status == TILE_ERR_COMPILE:
        return TileCompileError
    return TileError


# ---- finding the libraries ----------------------------------------------------

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env(name):
    v = os.environ.get(name)
    return v if v else None


def _pkg_config(var, pkg):
    exe = shutil.which("pkg-config")
    if not exe:
        return None
    try:
        r = subprocess.run([exe, "--variable=" + var, pkg], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    v = r.stdout.strip()
    return v if r.returncode == 0 and v else None


def interpreting():
    """True when TILE_INTERPRET selects the emulator (docs/emulator.md): any
    value but empty and 0."""
    v = os.environ.get("TILE_INTERPRET", "")
    return v not in ("", "0")


def lib_dir():
    """The folder the libraries are loaded from, and how it was chosen:
    ($TILE_LIB_DIR, "TILE_LIB_DIR"), (<repo>/build/lib, "repository build"),
    (pkg-config --variable=libdir tile, "pkg-config"), or (None, "loader")
    when the dynamic loader's own search (LD_LIBRARY_PATH, ldconfig) is left."""
    d = _env("TILE_LIB_DIR")
    if d:
        return os.path.abspath(d), "TILE_LIB_DIR"
    d = os.path.join(REPO_ROOT, "build", "lib")
    if os.path.exists(os.path.join(d, "libtilert.so.0")):
        return d, "repository build"
    d = _pkg_config("libdir", "tile") or _pkg_config("libdir", "tilert")
    if d and os.path.isdir(d):
        return d, "pkg-config"
    return None, "loader"


def cubin_dir():
    """Where JFA's cubins are: $TILE_JFA_CUBIN_DIR; else beside a build's
    library folder (<build>/lib -> <build>/examples, the repository's
    build/examples); else pkg-config --variable=cubindir jfa; else
    <libdir>/tile/jfa (make install's layout)."""
    d = _env("TILE_JFA_CUBIN_DIR")
    if d:
        return os.path.abspath(d)
    ld, _ = lib_dir()
    if ld:
        ex = os.path.join(os.path.dirname(ld), "examples")
        if os.path.isdir(ex) and any(f.startswith("jfa_fwd.") for f in os.listdir(ex)):
            return ex
        inst = os.path.join(ld, "tile", "jfa")
        if os.path.isdir(inst):
            return inst
    d = _pkg_config("cubindir", "jfa")
    if d:
        return d
    return os.path.join(REPO_ROOT, "build", "examples")


_load_lock = threading.Lock()
_loaded = {}


def _load(name):
    """Load lib<name>.so (name: tilert, jfa, tilejit) once."""
    with _load_lock:
        if name in _loaded:
            return _loaded[name]
        d, how = lib_dir()
        candidates = []
        if d:
            # the soname first: a bundle may hold another lib<name>.so (build-gpu's static libjfa.so)
            candidates += [os.path.join(d, "lib%s.so.0" % name), os.path.join(d, "lib%s.so" % name)]
        else:
            candidates += ["lib%s.so.0" % name, "lib%s.so" % name]
        errors = []
        lib = None
        for path in candidates:
            if d and not os.path.exists(path):
                errors.append("%s: no such file" % path)
                continue
            try:
                lib = C.CDLL(path)
                break
            except OSError as e:
                errors.append(str(e))
        if lib is None:
            raise LibraryNotFound(
                "lib%s.so not loaded (library folder: %s, chosen by %s): %s. Build it (make shared-libs), "
                "or set TILE_LIB_DIR to the folder holding it (docs/python.md)" % (name, d, how, "; ".join(errors)))
        _declare(name, lib)
        _loaded[name] = lib
        return lib


# ---- the C types ----------------------------------------------------------------

tile_devptr = C.c_uint64
tile_stream = C.c_void_p


class JfaTensor(C.Structure):
    """jfa.h's jfa_tensor."""
    _fields_ = [("data", C.c_uint64), ("dtype", C.c_char_p), ("rank", C.c_int),
                ("shape", C.c_int64 * 4), ("stride", C.c_int64 * 4)]


class JfaParams(C.Structure):
    """jfa.h's jfa_params, field for field (tests/python/test_basic.py
    compares it with the header through the C compiler)."""
    _fields_ = [("batch", C.c_int64), ("cu_seqlens", C.c_void_p), ("cu_seqlens_64bit", C.c_int),
                ("heads", C.c_int), ("head_dim", C.c_int), ("causal", C.c_int), ("num_q", C.c_int64),
                ("softmax_scale", C.c_float), ("no_zigzag", C.c_int), ("no_split", C.c_int),
                ("num_ctas", C.c_int), ("passes", C.c_int), ("deterministic", C.c_int),
                ("window", C.c_int), ("window_left", C.c_int), ("window_right", C.c_int),
                ("softcap", C.c_float), ("alibi_slopes", C.POINTER(C.c_float)),
                ("variant", C.c_char_p), ("variant_args", C.POINTER(C.c_int32)), ("nvariant_args", C.c_int),
                ("block_mask", C.c_void_p), ("block_mask_mode", C.c_int), ("block_mask_bytes", C.c_int64),
                ("cta_pair", C.c_int)]


JFA_MASK_PER_BATCH, JFA_MASK_PER_SEQUENCE = 1, 2


class JfaParamsPadded(C.Structure):
    """JfaParams followed by zeros: a field a newer jfa.h appends reads 0,
    C's "none" for every optional field (a {0}-initialised struct)."""
    _fields_ = [("p", JfaParams), ("_zero", C.c_char * 256)]


JFA_FWD, JFA_BWD = 1, 2

TILE_PARAM_PTR, TILE_PARAM_SCALAR, TILE_PARAM_TMA = 0, 1, 2


class TileParamInfo(C.Structure):
    _fields_ = [("name", C.c_char * 64), ("kind", C.c_int), ("dtype", C.c_char * 8), ("size", C.c_int),
                ("align", C.c_int), ("multiple", C.c_int), ("box", C.c_int * 2), ("swizzle", C.c_int)]


class TileKernelInfo(C.Structure):
    _fields_ = [("name", C.c_char * 128), ("threads", C.c_int), ("smem_bytes", C.c_int),
                ("cluster", C.c_int * 3), ("nparams", C.c_int), ("params", C.POINTER(TileParamInfo))]


class TileDeviceInfo(C.Structure):
    _fields_ = [("name", C.c_char * 256), ("cc_major", C.c_int), ("cc_minor", C.c_int), ("sm_count", C.c_int),
                ("total_mem", C.c_size_t), ("max_smem_per_block_optin", C.c_int), ("l2_bytes", C.c_int)]


class TileJitDefine(C.Structure):
    _fields_ = [("name", C.c_char_p), ("value", C.c_char_p)]


class TileJitOptions(C.Structure):
    _fields_ = [("arch", C.c_char_p), ("defines", C.POINTER(TileJitDefine)), ("ndefines", C.c_int),
                ("cache_dir", C.c_char_p), ("no_cache", C.c_int), ("opt_level", C.c_int),
                ("include_dirs", C.POINTER(C.c_char_p)), ("ninclude_dirs", C.c_int),
                ("no_line_info", C.c_int), ("tree_reductions", C.c_int), ("no_stmatrix", C.c_int),
                ("embed_ptx", C.c_int), ("use_nvjitlink", C.c_int), ("ptxas", C.c_char_p),
                ("max_errors", C.c_int), ("stats", C.c_int), ("no_tma_rings", C.c_int),
                ("tma_rings_all", C.c_int), ("no_smem_home", C.c_int),
                ("no_wide_stores", C.c_int)]


class TileJitStats(C.Structure):
    _fields_ = [("cache_hit", C.c_int), ("cache_rebuilt", C.c_int), ("compile_seconds", C.c_double),
                ("key", C.c_char * 65), ("report", C.c_void_p)]


TILE_JIT_O0 = -1
TMA_DESC_BYTES = 128

# tile_jit_autotune_* (runtime.h): the launch callback and the clock
AUTOTUNE_LAUNCH_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.c_int, C.c_void_p)
AUTOTUNE_CLOCK_FN = C.CFUNCTYPE(C.c_double, C.c_void_p)


class TileJitAutotuneConfig(C.Structure):
    _fields_ = [("defines", C.POINTER(TileJitDefine)), ("ndefines", C.c_int)]


class TileJitAutotuneDesc(C.Structure):
    _fields_ = [("filename", C.c_char_p), ("source", C.c_char_p), ("len", C.c_size_t), ("kernel", C.c_char_p),
                ("opts", C.POINTER(TileJitOptions)), ("configs", C.POINTER(TileJitAutotuneConfig)),
                ("nconfigs", C.c_int), ("warmup", C.c_int), ("reps", C.c_int), ("clock", AUTOTUNE_CLOCK_FN),
                ("clock_user", C.c_void_p)]


class TileJitAutotuneStats(C.Structure):
    _fields_ = [("config", C.c_int), ("tuned", C.c_int), ("from_disk", C.c_int), ("ntimed", C.c_int),
                ("nskipped", C.c_int), ("best_ms", C.c_double), ("key", C.c_char * 65), ("notes", C.c_char * 1024)]

_P = C.POINTER
_VP = C.c_void_p
_RT = {
    "tile_status_name": (C.c_char_p, [C.c_int]),
    "tile_last_error": (C.c_char_p, []),
    "tile_init": (C.c_int, [C.c_int]),
    "tile_device_info_get": (C.c_int, [_P(TileDeviceInfo)]),
    "tile_device_arch": (C.c_int, [C.c_char_p, C.c_size_t]),
    "tile_malloc": (C.c_int, [_P(tile_devptr), C.c_size_t]),
    "tile_free": (C.c_int, [tile_devptr]),
    "tile_memcpy_htod": (C.c_int, [tile_devptr, _VP, C.c_size_t]),
    "tile_memcpy_dtoh": (C.c_int, [_VP, tile_devptr, C.c_size_t]),
    "tile_memset_d8": (C.c_int, [tile_devptr, C.c_uint8, C.c_size_t]),
    "tile_synchronize": (C.c_int, []),
    "tile_stream_synchronize": (C.c_int, [tile_stream]),
    "tile_module_load_data": (C.c_int, [_VP, C.c_size_t, _P(_VP)]),
    "tile_module_load_file": (C.c_int, [C.c_char_p, _P(_VP)]),
    "tile_module_unload": (C.c_int, [_VP]),
    "tile_module_num_kernels": (C.c_int, [_VP]),
    "tile_module_kernel_info": (_P(TileKernelInfo), [_VP, C.c_int]),
    "tile_module_get_kernel": (C.c_int, [_VP, C.c_char_p, _P(_VP)]),
    "tile_kernel_get_info": (_P(TileKernelInfo), [_VP]),
    "tile_launch": (C.c_int, [_VP, C.c_uint, C.c_uint, C.c_uint, _P(_VP), C.c_int, tile_stream]),
    "tile_tma_desc_2d": (C.c_int, [_VP, _VP, C.c_int, tile_devptr, C.c_uint64, C.c_uint64, C.c_uint64]),
    "tile_meta_parse": (_VP, [C.c_char_p, C.c_size_t, C.c_char_p, C.c_size_t]),
    "tile_meta_num_kernels": (C.c_int, [_VP]),
    "tile_meta_kernel": (_P(TileKernelInfo), [_VP, C.c_int]),
    "tile_meta_free": (None, [_VP]),
    "tile_cubin_find_meta": (_VP, [_VP, C.c_size_t, _P(C.c_size_t)]),
}
_JFA = {
    "jfa_lib_open": (C.c_int, [C.c_char_p, _P(_VP)]),
    "jfa_lib_close": (None, [_VP]),
    "jfa_check_params": (C.c_int, [_P(JfaParams), _P(C.c_int64)]),
    "jfa_plan_create": (C.c_int, [_VP, _P(JfaParams), _P(_VP)]),
    "jfa_plan_destroy": (None, [_VP]),
    "jfa_plan_update": (C.c_int, [_VP, _VP, C.c_int, C.c_int64, tile_stream]),
    "jfa_plan_forward": (C.c_int, [_VP] + [_P(JfaTensor)] * 5 + [tile_stream]),
    "jfa_plan_backward": (C.c_int, [_VP] + [_P(JfaTensor)] * 9 + [tile_stream]),
    "jfa_check_tensors": (C.c_int, [_P(JfaParams), C.c_int64] + [_P(JfaTensor)] * 5),
    "jfa_check_bwd_tensors": (C.c_int, [_P(JfaParams), C.c_int64] + [_P(JfaTensor)] * 9),
    "jfa_bwd_workspace_bytes": (C.c_int, [_P(JfaParams), _P(C.c_size_t)]),
    "jfa_plan_stats": (None, [_VP, _P(C.c_int64), _P(C.c_int64), _P(C.c_int64), _P(C.c_int)]),
    "jfa_plan_split_stats": (None, [_VP, _P(C.c_int64), _P(C.c_int64)]),
}
_JIT = {
    "tile_jit_compile_cubin": (C.c_int, [C.c_char_p, C.c_char_p, C.c_size_t, _P(TileJitOptions), _P(_VP),
                                         _P(C.c_size_t), _P(TileJitStats)]),
    "tile_jit_cache_dir": (C.c_int, [_P(TileJitOptions), C.c_char_p, C.c_size_t]),
    "tile_jit_autotune_create": (C.c_int, [_P(TileJitAutotuneDesc), _P(_VP)]),
    "tile_jit_autotune_destroy": (None, [_VP]),
    "tile_jit_autotune_launch": (C.c_int, [_VP, C.c_char_p, AUTOTUNE_LAUNCH_FN, _VP, tile_stream,
                                           _P(TileJitAutotuneStats)]),
    "tile_jit_autotune_best": (C.c_int, [_VP, C.c_char_p, _P(C.c_int), _P(C.c_double)]),
    "tile_jit_autotune_kernel": (C.c_int, [_VP, C.c_int, _P(_VP)]),
}
_TABLES = {"tilert": _RT, "jfa": _JFA, "tilejit": _JIT}


def _declare(name, lib):
    for fn, (res, args) in _TABLES[name].items():
        try:
            f = getattr(lib, fn)
        except AttributeError:
            continue  # an older library without it: calling it raises AttributeError
        f.restype = res
        f.argtypes = args


def rt():
    """libtilert (the runtime: tile_* calls)."""
    return _load("tilert")


def jfa():
    """libjfa (jfa_* calls). The runtime it uses is libtilert's (one instance)."""
    rt()
    return _load("jfa")


def jit():
    """libtilejit (tile_jit_* calls)."""
    rt()
    return _load("tilejit")


def last_error(lib=None):
    m = (lib or rt()).tile_last_error()
    return m.decode(errors="replace") if m else ""


def check(status, call, lib=None):
    """Raise the TileError for a failing status, with tile_last_error()."""
    if status != TILE_OK:
        raise _error_class(status)(status, last_error(lib), call)


def call(lib_getter, fn, *args):
    lib = lib_getter()
    st = getattr(lib, fn)(*args)
    check(st, fn, lib)
    return st


# ---- the device ---------------------------------------------------------------------

_tls = threading.local()


def init(ordinal=0):
    """tile_init(ordinal) for this thread (cheap once done: remembered per thread)."""
    if getattr(_tls, "device", None) == ordinal:
        return
    check(rt().tile_init(ordinal), "tile_init(%d)" % ordinal)
    _tls.device = ordinal


def device_info(ordinal=0):
    init(ordinal)
    i = TileDeviceInfo()
    check(rt().tile_device_info_get(C.byref(i)), "tile_device_info_get")
    return {"name": i.name.decode(), "cc": (i.cc_major, i.cc_minor), "sm_count": i.sm_count,
            "total_mem": i.total_mem, "max_smem_per_block_optin": i.max_smem_per_block_optin,
            "l2_bytes": i.l2_bytes}


def device_arch(ordinal=0):
    init(ordinal)
    buf = C.create_string_buffer(32)
    check(rt().tile_device_arch(buf, len(buf)), "tile_device_arch")
    return buf.value.decode()


class DeviceBuffer:
    """Device memory from tile_malloc (on the emulator: host memory the
    emulator knows). .ptr is the device address; free() or the garbage
    collector returns it."""

    def __init__(self, nbytes, ordinal=0):
        init(ordinal)
        self.nbytes = int(nbytes)
        p = tile_devptr()
        check(rt().tile_malloc(C.byref(p), self.nbytes), "tile_malloc(%d)" % self.nbytes)
        self.ptr = p.value

    def upload(self, src, nbytes=None):
        """Copy nbytes (default: all) from host address or buffer `src`."""
        n = self.nbytes if nbytes is None else nbytes
        addr = src if isinstance(src, int) else C.addressof(C.c_char.from_buffer(src))
        check(rt().tile_memcpy_htod(self.ptr, C.c_void_p(addr), n), "tile_memcpy_htod")

    def download(self, dst, nbytes=None):
        n = self.nbytes if nbytes is None else nbytes
        addr = dst if isinstance(dst, int) else C.addressof(C.c_char.from_buffer(dst))
        check(rt().tile_memcpy_dtoh(C.c_void_p(addr), self.ptr, n), "tile_memcpy_dtoh")

    def free(self):
        if self.ptr:
            rt().tile_free(self.ptr)
            self.ptr = 0

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass

    def __int__(self):
        return self.ptr
