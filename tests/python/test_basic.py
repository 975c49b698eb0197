"""tests/python/test_basic.py - the Python package without PyTorch and
without a GPU: import, library discovery, the ctypes mirror of jfa_params
against jfa.h (through the C compiler), the JIT (compile, cache hit,
the compile report, diagnostics as exceptions), kernel launches on the emulator with
DeviceBuffer arguments, tile.autotune (the mechanism, with a scripted
clock), JFA's C-level checks as exceptions, a JFA
forward pass on the emulator against a float64 reference in pure Python,
and the compiler's pipelined dot over each operand layout, by TMA and by
cp.async, against float64.

Run by tests/python/run.sh (TILE_LIB_DIR, TILE_JFA_CUBIN_DIR, PYTHONPATH set).
The emulator parts need TILE_INTERPRET=1 (run.sh sets it).
"""
import array
import ctypes as C
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import tile
from tile import _lib, jfa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTOR_ADD = os.path.join(ROOT, "examples", "vector_add", "vector_add.tile")
JFA_H = os.path.join(ROOT, "examples", "jagged_attention", "jfa.h")
EMU = _lib.interpreting()


def bf16_bits(x):
    f = struct.unpack("<I", struct.pack("<f", x))[0]
    return ((f + 0x7fff + ((f >> 16) & 1)) >> 16) & 0xffff


def bf16_value(b):
    return struct.unpack("<f", struct.pack("<I", b << 16))[0]


class Discovery(unittest.TestCase):
    def test_import_and_dirs(self):
        d, how = tile.lib_dir()
        self.assertTrue(d and os.path.isdir(d), (d, how))
        self.assertEqual(how, "TILE_LIB_DIR")  # run.sh sets it
        self.assertTrue(os.path.isdir(tile.cubin_dir()))

    def test_lib_dir_order(self):
        env = dict(os.environ)
        try:
            os.environ.pop("TILE_LIB_DIR", None)
            d, how = tile.lib_dir()
            # the repository's build/lib when built, else pkg-config, else the loader
            self.assertIn(how, ("repository build", "pkg-config", "loader"))
            os.environ["TILE_LIB_DIR"] = "/nonexistent/lib"
            self.assertEqual(tile.lib_dir(), ("/nonexistent/lib", "TILE_LIB_DIR"))
            os.environ["TILE_JFA_CUBIN_DIR"] = "/x/cubins"
            self.assertEqual(tile.cubin_dir(), "/x/cubins")
        finally:
            os.environ.clear()
            os.environ.update(env)

    def test_missing_library_message(self):
        saved = dict(_lib._loaded)
        env = os.environ.get("TILE_LIB_DIR")
        try:
            _lib._loaded.clear()
            os.environ["TILE_LIB_DIR"] = "/nonexistent/lib"
            with self.assertRaises(tile.LibraryNotFound) as cm:
                _lib.rt()
            self.assertIn("TILE_LIB_DIR", str(cm.exception))
            self.assertIn("/nonexistent/lib", str(cm.exception))
        finally:
            _lib._loaded.clear()
            _lib._loaded.update(saved)
            os.environ["TILE_LIB_DIR"] = env


class ParamsMirror(unittest.TestCase):
    """tile._lib.JfaParams must be jfa.h's jfa_params: every field of the
    header at the same offset with the same size (the C compiler says)."""

    def header_fields(self):
        text = open(JFA_H).read()
        body = re.search(r"typedef struct jfa_params \{(.*?)\} jfa_params;", text, re.S).group(1)
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        names = []
        for decl in body.split(";"):
            decl = decl.strip()
            if not decl:
                continue
            # "int window_left, window_right" / "const void *cu_seqlens"
            parts = [p.strip() for p in decl.split(",")]
            first = re.match(r"(.*?)([A-Za-z_]\w*)$", parts[0]).group(2)
            names.append(first)
            names += [re.sub(r"^\*+", "", p) for p in parts[1:]]
        return names

    def test_mirror(self):
        cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler")
        names = self.header_fields()
        mirror = dict((n, (getattr(_lib.JfaParams, n).offset, getattr(_lib.JfaParams, n).size))
                      for n, _ in _lib.JfaParams._fields_)
        missing = [n for n in names if n not in mirror]
        self.assertEqual(missing, [], "jfa.h's jfa_params has fields tile._lib.JfaParams lacks")
        with tempfile.TemporaryDirectory() as t:
            src = os.path.join(t, "m.c")
            with open(src, "w") as f:
                f.write('#include <stdio.h>\n#include <stddef.h>\n#include "jfa.h"\nint main(void) {\n')
                f.write('  printf("sizeof %zu\\n", sizeof(jfa_params));\n')
                for n in names:
                    f.write('  printf("%s %%zu %%zu\\n", offsetof(jfa_params, %s), sizeof(((jfa_params *)0)->%s));\n'
                            % (n, n, n))
                f.write("  return 0;\n}\n")
            exe = os.path.join(t, "m")
            subprocess.run([cc, "-I" + os.path.join(ROOT, "include"), "-I" + os.path.dirname(JFA_H), src, "-o", exe],
                           check=True)
            out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split("\n")
        csize = int(out[0].split()[1])
        for line in out[1:]:
            if not line:
                continue
            n, off, size = line.split()
            self.assertEqual(mirror[n], (int(off), int(size)), "field %s: C (offset, size) vs ctypes" % n)
        self.assertGreaterEqual(C.sizeof(_lib.JfaParams), csize)
        extra = [n for n in mirror if n not in names]
        if extra:  # trailing fields the header does not have (yet): C never reads them
            self.assertGreaterEqual(min(mirror[n][0] for n in extra), csize)
            print("note: tile._lib.JfaParams has fields after jfa.h's: %s" % ", ".join(extra))


class WithCache(unittest.TestCase):
    """A JIT cache folder of the class's own."""

    @classmethod
    def setUpClass(cls):
        cls.cache = tempfile.mkdtemp(prefix="tile_py_cache")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.cache, ignore_errors=True)


@unittest.skipUnless(EMU, "needs TILE_INTERPRET=1 (the emulator) or a GPU")
class Jit(WithCache):

    def test_compile_and_cache(self):
        opts = {"cache_dir": self.cache}
        k1 = tile.Kernel(VECTOR_ADD, "vector_add", constants={"BLOCK": 512}, options=opts)
        k2 = tile.Kernel(VECTOR_ADD, "vector_add", constants={"BLOCK": 512}, options=opts)
        self.assertFalse(k1.stats["cache_hit"])
        self.assertTrue(k2.stats["cache_hit"])
        self.assertEqual(k1.cubin, k2.cubin)
        self.assertEqual([(p.name, p.kind, p.dtype) for p in k1.params],
                         [("x", "ptr", "f32"), ("y", "ptr", "f32"), ("out", "ptr", "f32"), ("n", "scalar", "i32")])
        self.assertEqual(k1.info.threads, 128)
        k3 = tile.Kernel(VECTOR_ADD, "vector_add", constants={"BLOCK": 256}, options=opts)
        self.assertFalse(k3.stats["cache_hit"])  # another constant, another entry

    def test_compile_report(self):
        # options stats=True: tilec --stats's report in .stats["report"] (docs/stats.md)
        opts = {"cache_dir": self.cache}
        tile.Kernel(VECTOR_ADD, "vector_add", constants={"BLOCK": 128}, options=opts)
        k = tile.Kernel(VECTOR_ADD, "vector_add", constants={"BLOCK": 128}, options=dict(opts, stats=True))
        self.assertFalse(k.stats["cache_hit"])  # the report describes a compile: compiled, not fetched
        self.assertIn("kernel vector_add (", k.stats["report"])
        self.assertRegex(k.stats["report"], r"\n  registers: \d+ a thread\n")
        k2 = tile.Kernel(VECTOR_ADD, "vector_add", constants={"BLOCK": 128}, options=opts)
        self.assertTrue(k2.stats["cache_hit"])
        self.assertIsNone(k2.stats["report"])
        self.assertEqual(k.cubin, k2.cubin)

    def test_compile_error(self):
        src = "kernel k(x: *f32, n: i32) warps(4) {\n    let y = nosuch + 1;\n}\n"
        with self.assertRaises(tile.TileCompileError) as cm:
            tile.Kernel(src, "k", options={"no_cache": True}, filename="bad.tile")
        e = cm.exception
        self.assertIn("bad.tile:2:", e.diagnostics)
        self.assertIn("nosuch", str(e))
        self.assertEqual(e.status_name, "TILE_ERR_COMPILE")

    def test_bad_options(self):
        with self.assertRaises(TypeError):
            tile.Kernel(VECTOR_ADD, "vector_add", options={"nosuch": 1})
        with self.assertRaises(ValueError):
            tile.Kernel(VECTOR_ADD, "nosuch_kernel", options={"cache_dir": self.cache})

    def test_launch_buffers(self):
        k = tile.Kernel(VECTOR_ADD, "vector_add", options={"cache_dir": self.cache})
        for n in (1, 1023, 1025, 3001):
            x = array.array("f", [random.uniform(-1, 1) for _ in range(n)])
            y = array.array("f", [random.uniform(-1, 1) for _ in range(n)])
            bx, by, bo = tile.DeviceBuffer(4 * n), tile.DeviceBuffer(4 * n), tile.DeviceBuffer(4 * n + 64)
            bx.upload(x)
            by.upload(y)
            sentinel = array.array("f", [7.0] * (n + 16))
            bo.upload(sentinel)
            k[(n + 1023) // 1024,](bx, by, bo, n)
            o = array.array("f", [0.0] * (n + 16))
            bo.download(o)
            want = [struct.unpack("<f", struct.pack("<f", a + b))[0] for a, b in zip(x, y)]
            self.assertEqual(list(o[:n]), want)
            self.assertEqual(list(o[n:]), [7.0] * 16)  # nothing written past the end
        # grid as a callable of the constants, and an empty grid
        k[lambda meta: ((3001 + meta.get("BLOCK", 1024) - 1) // meta.get("BLOCK", 1024),)](bx, by, bo, 3001)
        k[0](bx, by, bo, 0)

    def test_launch_fast_path(self):
        # the common launch goes through _launch_fast (no per-argument
        # messages built); anything it does not handle falls back, unlaunched
        k = tile.Kernel(VECTOR_ADD, "vector_add", options={"cache_dir": self.cache})
        n = 1000  # not a multiple of 16: the unspecialized build runs it
        x = array.array("f", [float(i) for i in range(n)])
        bx, by, bo = tile.DeviceBuffer(4 * n), tile.DeviceBuffer(4 * n), tile.DeviceBuffer(4 * n)
        bx.upload(x)
        by.upload(x)
        self.assertTrue(k._launch_fast((1,), (bx, by, bo, n), None))
        o = array.array("f", [0.0] * n)
        bo.download(o)
        self.assertEqual(list(o), [2.0 * i for i in range(n)])
        for grid, args in (((1,), (bx, by, bo, 2 ** 31)), ((1,), (bx, by, bo, 1.5)), ((1,), ("x", by, bo, n)),
                           ((0,), (bx, by, bo, n)), ((1, 2, 3, 4), (bx, by, bo, n)), ((1,), (bx, by, bo)),
                           ((1,), (bx, by, bo, 1024))):  # 1024: the multiple_of(16) build's
            self.assertFalse(k._launch_fast(grid, args, None), (grid, args))

    def test_launch_argument_errors(self):
        k = tile.Kernel(VECTOR_ADD, "vector_add", options={"cache_dir": self.cache})
        b = tile.DeviceBuffer(64)
        with self.assertRaisesRegex(TypeError, "takes 4 arguments"):
            k[1](b, b, b)
        with self.assertRaisesRegex(OverflowError, "out of range for i32"):
            k[1](b, b, b, 2 ** 31)
        with self.assertRaisesRegex(TypeError, "takes an integer"):
            k[1](b, b, b, 1.5)
        with self.assertRaisesRegex(TypeError, "DeviceBuffer or an int"):
            k[1]("x", b, b, 1)
        with self.assertRaisesRegex(ValueError, "fixed by the compiler"):
            k[1](b, b, b, 1, smem=12345)
        with self.assertRaisesRegex(ValueError, "cluster shape is fixed"):
            k[1](b, b, b, 1, cluster=(2, 1, 1))
        with self.assertRaisesRegex(ValueError, "grid"):
            k[(1, 2, 3, 4)](b, b, b, 1)
        # the runtime's own check (alignment) comes back as TileInvalidArgument
        with self.assertRaises(tile.TileInvalidArgument) as cm:
            k[1](b.ptr + 2, b, b, 1)
        self.assertIn("x", str(cm.exception))

    def test_emulator_report_is_exception(self):
        k = tile.Kernel(VECTOR_ADD, "vector_add", options={"cache_dir": self.cache})
        b = tile.DeviceBuffer(64)
        with self.assertRaises(tile.TileError) as cm:
            k[1](b, b, b, 1000)  # reads far past the 64 bytes
        self.assertIn("outside", str(cm.exception))

    def test_from_cubin(self):
        k = tile.Kernel(VECTOR_ADD, "vector_add", options={"cache_dir": self.cache})
        k2 = tile.Kernel.from_cubin(k.cubin)
        self.assertEqual(k2.name, "vector_add")
        with self.assertRaises(tile.TileError):
            tile.Kernel.from_cubin(b"\x7fELF not really")

    def test_specialize(self):
        # an integer argument divisible by 16 runs a build that knows it (as
        # Triton's JIT does), compiled once, with the launch check that goes
        # with the promise; others run the kernel as written
        k = tile.Kernel(VECTOR_ADD, "vector_add", options={"cache_dir": self.cache})
        n = 2048
        bx, by, bo = tile.DeviceBuffer(4 * n), tile.DeviceBuffer(4 * n), tile.DeviceBuffer(4 * n)
        self.assertIs(k.specialized(bx, by, bo, n - 1), k)
        v = k.specialized(bx, by, bo, n)
        self.assertIsNot(v, k)
        self.assertIs(k.specialized(bx, by, bo, 16 * 7), v)  # one build per set of parameters
        self.assertEqual([p.multiple for p in v.params if p.name == "n"], [16])
        self.assertEqual([p.multiple for p in k.params if p.name == "n"], [1])
        x = array.array("f", [random.uniform(-1, 1) for _ in range(n)])
        y = array.array("f", [random.uniform(-1, 1) for _ in range(n)])
        bx.upload(x)
        by.upload(y)
        k[(n + 1023) // 1024,](bx, by, bo, n)
        o = array.array("f", [0.0] * n)
        bo.download(o)
        self.assertEqual(list(o), [struct.unpack("<f", struct.pack("<f", a + b))[0] for a, b in zip(x, y)])
        with self.assertRaisesRegex(ValueError, "multiple of 16"):
            v[1](bx, by, bo, n - 1)  # the specialized build refuses what it was not built for
        plain = tile.Kernel(VECTOR_ADD, "vector_add", options={"cache_dir": self.cache}, specialize=False)
        self.assertIs(plain.specialized(bx, by, bo, n), plain)


TUNE_SRC = """kernel vadd(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 256, const W: i32 = 4) warps(W) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}
"""
TUNE_CONFIGS = [{"BLOCK": 128, "W": 1}, {"BLOCK": 256, "W": 2}, {"BLOCK": 512}]


def tune_grid(n):
    return lambda meta: ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)


class FakeClock:
    """Reads of a clock that the tests script: timing on the emulator means
    nothing, so each config's time is given. The tuner reads the clock
    before and after each timed launch, config after config: with reps=1
    and no warm-up, config i's time is reads[2i+1] - reads[2i]."""

    def __init__(self, per_config):
        self.values = []
        t = 0.0
        for ms in per_config:
            self.values += [t, t + ms]
            t += 100.0
        self.reads = 0

    def __call__(self):
        if self.reads >= len(self.values):
            raise AssertionError("the clock was read more often than the configs need")
        self.reads += 1
        return self.values[self.reads - 1]


# The compiler's pipeline of a dot in a K loop (compiler/pipeline.c) over
# each operand layout: A as M x K (row-major) or K x M, B as K x N or N x K
# (a tile whose contiguous dimension is its first: stored transposed in its
# ring), and A through trans(load(...)) of a K x M tile; each by TMA (the
# tutorial's masks) and by cp.async (a row bound computed in the kernel,
# which the runtime cannot read to build a descriptor). On the emulator,
# against float64.
DOT_LAYOUT = """
kernel mm(a: *bf16, b: *bf16, c: *f32, M: i32, N: i32, K: i32, lda: i32 multiple_of(8), ldb: i32 multiple_of(8),
          const TA: i32 = 0, const TB: bool = false, const CPA: bool = false) warps(4) stages(3) {
    let rm = program_id(0) * 64 + arange(0, 64);
    let rn = program_id(1) * 64 + arange(0, 64);
    let rk = arange(0, 64);
    let acc = zeros([64, 64], f32);
    // the rows' bound: M itself (a parameter: TMA), or computed (cp.async)
    let mb = M;
    if CPA {
        mb = min(M, 1 << 30);
    }
    for k in range(0, K, 64) {
        let ka = k + rk;
        let ta = zeros([64, 64], bf16);
        if TA == 0 {
            ta = load(a + rm[:, None] * lda + ka[None, :], (rm[:, None] < mb) & (ka[None, :] < K), 0.0);
        } else if TA == 1 {
            ta = load(a + ka[None, :] * lda + rm[:, None], (rm[:, None] < mb) & (ka[None, :] < K), 0.0);
        } else {
            ta = trans(load(a + ka[:, None] * lda + rm[None, :], (ka[:, None] < K) & (rm[None, :] < mb), 0.0));
        }
        let tb = zeros([64, 64], bf16);
        if TB {
            tb = load(b + rn[None, :] * ldb + ka[:, None], (ka[:, None] < K) & (rn[None, :] < N), 0.0);
        } else {
            tb = load(b + ka[:, None] * ldb + rn[None, :], (ka[:, None] < K) & (rn[None, :] < N), 0.0);
        }
        acc = dot(ta, tb, acc);
    }
    store(c + rm[:, None] * N + rn[None, :], acc, (rm[:, None] < M) & (rn[None, :] < N));
}
"""


@unittest.skipUnless(EMU, "needs TILE_INTERPRET=1 (the emulator)")
class PipelinedDotLayouts(WithCache):
    def run_case(self, ta, tb, cpa, M, N, K):
        opts = {"cache_dir": self.cache, "stats": True}
        k = tile.Kernel(DOT_LAYOUT, "mm", constants={"TA": ta, "TB": tb, "CPA": cpa}, options=opts, specialize=False)
        rnd = random.Random(M * 7 + N * 3 + K + ta * 11 + tb * 13 + cpa)
        # A is M x K (TA = 0) or K x M; B is K x N or N x K (TB); rows padded to 8
        ar, ac = (M, K) if ta == 0 else (K, M)
        br, bc = (N, K) if tb else (K, N)
        lda, ldb = (ac + 7) // 8 * 8 + 8, (bc + 7) // 8 * 8 + 8
        av = [[rnd.uniform(-1, 1) for _ in range(ac)] for _ in range(ar)]
        bv = [[rnd.uniform(-1, 1) for _ in range(bc)] for _ in range(br)]
        nan = 0x7fc0  # in the padding: a copy the masks leave out would spread it
        abits = array.array("H", [bf16_bits(av[r][c]) if c < ac else nan for r in range(ar) for c in range(lda)])
        bbits = array.array("H", [bf16_bits(bv[r][c]) if c < bc else nan for r in range(br) for c in range(ldb)])
        ba, bb, bcb = tile.DeviceBuffer(2 * len(abits)), tile.DeviceBuffer(2 * len(bbits)), tile.DeviceBuffer(4 * M * N)
        ba.upload(abits)
        bb.upload(bbits)
        k[((M + 63) // 64, (N + 63) // 64)](ba, bb, bcb, M, N, K, lda, ldb)
        out = array.array("f", [0.0] * (M * N))
        bcb.download(out)
        A = lambda i, kk: bf16_value(abits[i * lda + kk] if ta == 0 else abits[kk * lda + i])
        B = lambda kk, j: bf16_value(bbits[j * ldb + kk] if tb else bbits[kk * ldb + j])
        for i in range(M):
            for j in range(N):
                want = sum(A(i, kk) * B(kk, j) for kk in range(K))
                got = out[i * N + j]
                if not abs(got - want) <= 1e-3 * (1 + abs(want)):
                    self.fail("TA=%d TB=%s CPA=%s %dx%dx%d: C[%d][%d] = %g, want %g" %
                              (ta, tb, cpa, M, N, K, i, j, got, want))
        return k

    def test_layouts(self):
        for ta in (0, 1, 2):
            for tb in (False, True):
                for cpa in (False, True):
                    self.run_case(ta, tb, cpa, 70, 66, 136)



# Four dots in a loop (compiler/pipeline_multi.c) with every kind of
# operand: X and W from before the loop (staged once; W as b, N-major), the
# loop's tile KB read by two dots (transposed, then not: one ring), S and T
# as a from registers; S and T's dots read only shared memory (issued
# together, waited for where used). On the emulator, against float64 with
# S and T rounded to bf16 as the kernel does, at lengths that end in a
# partial block and at 0 (no iteration).
MULTI_DOT = """
kernel four(x: *bf16, w: *bf16, kv: *bf16, out: *f32, n: i32, const BN: i32 = 32) warps(4) {
    let rm = arange(0, 64);
    let rd = arange(0, 64);
    let xt = load(x + rm[:, None] * 64 + rd[None, :]);
    let wt = load(w + rd[:, None] * 64 + rd[None, :]);
    let acc = zeros([64, 64], f32);
    for s in range(0, n, BN) {
        let rn = s + arange(0, BN);
        let kb = load(kv + rn[:, None] * 64 + rd[None, :], rn[:, None] < n, 0.0);
        let sc = dot(xt, trans(kb));
        let t = dot(xt, wt);
        acc = dot(sc as bf16, kb, acc);
        acc = dot(t as bf16, wt, acc);
    }
    store(out + rm[:, None] * 64 + rd[None, :], acc);
}
"""


@unittest.skipUnless(EMU, "needs TILE_INTERPRET=1 (the emulator)")
class PipelinedMultiDot(WithCache):
    def test_four_dots(self):
        k = tile.Kernel(MULTI_DOT, "four", options={"cache_dir": self.cache}, specialize=False)
        rnd = random.Random(5)
        D = 64
        bits = lambda rows: array.array("H", [bf16_bits(rnd.uniform(-1, 1)) for _ in range(rows * D)])
        xb, wb = bits(D), bits(D)
        X = [[bf16_value(xb[i * D + j]) for j in range(D)] for i in range(D)]
        W = [[bf16_value(wb[i * D + j]) for j in range(D)] for i in range(D)]
        rbf = lambda v: bf16_value(bf16_bits(v))
        T = [[rbf(sum(X[i][kk] * W[kk][j] for kk in range(D))) for j in range(D)] for i in range(D)]
        TW = [[sum(T[i][kk] * W[kk][j] for kk in range(D)) for j in range(D)] for i in range(D)]
        bx, bw = tile.DeviceBuffer(2 * D * D), tile.DeviceBuffer(2 * D * D)
        bx.upload(xb)
        bw.upload(wb)
        for n in (0, 96, 77):
            kvb = bits(max(n, 1) + 32)  # rows past n: loaded zero by the mask
            KV = [[bf16_value(kvb[i * D + j]) for j in range(D)] for i in range(n)]
            S = [[rbf(sum(X[i][kk] * KV[r][kk] for kk in range(D))) for r in range(n)] for i in range(D)]
            bkv, bo = tile.DeviceBuffer(2 * len(kvb)), tile.DeviceBuffer(4 * D * D)
            bkv.upload(kvb)
            k[(1,)](bx, bw, bkv, bo, n)
            out = array.array("f", [0.0] * (D * D))
            bo.download(out)
            iters = (n + 31) // 32
            for i in range(D):
                for j in range(D):
                    want = sum(S[i][r] * KV[r][j] for r in range(n)) + iters * TW[i][j]
                    got = out[i * D + j]
                    if not abs(got - want) <= 2e-3 * (1 + abs(want)):
                        self.fail("n=%d: out[%d][%d] = %g, want %g" % (n, i, j, got, want))


@unittest.skipUnless(EMU, "needs TILE_INTERPRET=1 (the emulator)")
class Autotune(unittest.TestCase):
    """tile.autotune on the emulator: the mechanism (each config timed once
    per key, the choice kept in memory and on disk, reused without timing by
    another tuner and another process; bad configs skipped, all bad an
    error), with a scripted clock."""

    def setUp(self):
        self.cache = tempfile.mkdtemp(prefix="tile_py_tune")
        self.n = 1000
        n = self.n
        self.x = array.array("f", [float(i) for i in range(n)])
        self.y = array.array("f", [0.5 * i for i in range(n)])
        self.bx, self.by, self.bo = tile.DeviceBuffer(4 * n), tile.DeviceBuffer(4 * n), tile.DeviceBuffer(4 * n)
        self.bx.upload(self.x)
        self.by.upload(self.y)

    def tearDown(self):
        shutil.rmtree(self.cache, ignore_errors=True)

    def tuner(self, clock, configs=TUNE_CONFIGS, **kw):
        kw.setdefault("key", ["n"])
        return tile.autotune(TUNE_SRC, "vadd", configs=configs, options={"cache_dir": self.cache}, warmup=0, reps=1,
                             clock=clock, filename="vadd.tile", **kw)

    def run_vadd(self, at, n=None):
        n = n or self.n
        self.bo.upload(array.array("f", [0.0] * self.n))
        at[tune_grid(n)](self.bx, self.by, self.bo, n)
        o = array.array("f", [0.0] * self.n)
        self.bo.download(o)
        self.assertEqual(list(o[:n]), [a + b for a, b in zip(self.x[:n], self.y[:n])])
        return at.last_stats

    def test_tune_once_then_reuse(self):
        clock = FakeClock([3.0, 1.0, 2.0])
        at = self.tuner(clock)
        st = self.run_vadd(at)
        self.assertEqual((st["tuned"], st["from_disk"], st["ntimed"], st["nskipped"], st["config"]),
                         (True, False, 3, 0, 1))
        self.assertEqual(st["best_ms"], 1.0)
        self.assertEqual(clock.reads, 6)
        entry = os.path.join(self.cache, st["key"][:2], st["key"] + ".cubin")
        self.assertTrue(os.path.isfile(entry), entry)
        # again: from memory, the clock untouched
        st = self.run_vadd(at)
        self.assertEqual((st["tuned"], st["from_disk"], st["ntimed"], st["config"]), (False, False, 0, 1))
        self.assertEqual(clock.reads, 6)
        self.assertEqual(at.best(self.bx, self.by, self.bo, self.n), (1, {"BLOCK": 256, "W": 2}, [3.0, 1.0, 2.0]))
        self.assertIsNone(at.best(self.bx, self.by, self.bo, 7))
        # another tuner (as another process would): from disk, never timed
        at2 = self.tuner(FakeClock([]))
        st = self.run_vadd(at2)
        self.assertEqual((st["tuned"], st["from_disk"], st["ntimed"], st["config"]), (False, True, 0, 1))
        # another process
        script = ("import tile, sys\n"
                  "sys.path.insert(0, %r)\n"
                  "import test_basic as t\n"
                  "at = tile.autotune(t.TUNE_SRC, 'vadd', configs=t.TUNE_CONFIGS, key=['n'], "
                  "options={'cache_dir': %r}, warmup=0, reps=1, clock=t.FakeClock([]), filename='vadd.tile')\n"
                  "b = tile.DeviceBuffer(4 * 1000)\n"
                  "at[t.tune_grid(1000)](b, b, b, 1000)\n"
                  "print(at.last_stats['from_disk'], at.last_stats['ntimed'], at.last_stats['config'])\n"
                  % (os.path.dirname(os.path.abspath(__file__)), self.cache))
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split(), ["True", "0", "1"])
        # another key is tuned anew
        clock2 = FakeClock([5.0, 4.0, 0.5])
        at2._clock = clock2
        st = self.run_vadd(at2, n=600)
        self.assertEqual((st["tuned"], st["ntimed"], st["config"]), (True, 3, 2))
        self.assertEqual(clock2.reads, 6)

    def test_events_and_key_callable(self):
        # no clock: CUDA events, which read 0 ms on the emulator (a tie: the first config)
        at = tile.autotune(TUNE_SRC, "vadd", configs=TUNE_CONFIGS, key=lambda x, y, out, n: n // 100,
                           options={"cache_dir": self.cache}, reps=2)
        st = self.run_vadd(at)
        self.assertEqual((st["tuned"], st["ntimed"], st["config"]), (True, 3, 0))
        self.assertEqual(at.key_of((self.bx, self.by, self.bo, 1099)), "10")
        self.assertEqual(at.kernel_info(2).threads, 128)

    def test_bad_configs_skipped(self):
        clock = FakeClock([2.0, 1.0])
        at = self.tuner(clock, configs=[{"W": 3}, {"BLOCK": 128}, {"BLOCK": 64, "W": 2}])
        st = self.run_vadd(at)
        self.assertEqual((st["tuned"], st["ntimed"], st["nskipped"], st["config"]), (True, 2, 1, 2))
        self.assertIn("config 0 (W=3): TILE_ERR_COMPILE", st["notes"])
        self.assertIn("warps(3)", st["notes"])
        self.assertEqual(at.best(self.bx, self.by, self.bo, self.n)[2], [None, 2.0, 1.0])

    def test_all_bad(self):
        at = self.tuner(FakeClock([]), configs=[{"W": 3}, {"W": 5}])
        with self.assertRaises(tile.TileCompileError) as cm:
            self.run_vadd(at)
        self.assertIn("every config of vadd failed", str(cm.exception))
        self.assertIn("config 0 (W=3): TILE_ERR_COMPILE", str(cm.exception))
        self.assertIn("config 1 (W=5): TILE_ERR_COMPILE", str(cm.exception))
        at = self.tuner(FakeClock([]), configs=[{"W": 3}, {"W": 5}], key=None)  # the C tuner's own message
        with self.assertRaises(tile.TileCompileError) as cm:
            self.run_vadd(at)
        self.assertIn("every config of vadd failed for key ''", str(cm.exception))
        self.assertIn("config 1 (W=5): TILE_ERR_COMPILE", str(cm.exception))

    def test_clock_errors(self):
        at = self.tuner(FakeClock([1.0]))  # enough for config 0 only: the others fail
        st = self.run_vadd(at)
        self.assertEqual((st["tuned"], st["ntimed"], st["nskipped"], st["config"]), (True, 1, 2, 0))
        self.assertIn("config 1 (BLOCK=256 W=2): TILE_ERR_INVALID: tile_jit_autotune: the clock gave nan", st["notes"])
        at = self.tuner(FakeClock([]), key=None)
        with self.assertRaisesRegex(AssertionError, "read more often"):  # the clock's own exception
            self.run_vadd(at)

    def test_argument_errors(self):
        at = self.tuner(None)
        with self.assertRaisesRegex(TypeError, "takes 4 arguments"):
            at[1](self.bx, self.by, self.bo)
        at = self.tuner(None, key=None)
        with self.assertRaisesRegex(TypeError, "takes 4 arguments"):
            at[1](self.bx, self.by, self.bo)  # raised in the launch callback, re-raised as it was
        with self.assertRaisesRegex(ValueError, "not a parameter"):
            self.tuner(FakeClock([]), key=["nosuch"])[1](self.bx, self.by, self.bo, 5)
        with self.assertRaisesRegex(TypeError, "key on scalar or tensor"):
            self.tuner(FakeClock([]), key=["x"])[1](self.bx, self.by, self.bo, 5)
        with self.assertRaises(ValueError):
            tile.autotune(TUNE_SRC, "vadd", configs=[])
        with self.assertRaises(TypeError):
            tile.autotune(TUNE_SRC, "vadd", configs=[{"BLOCK": 64}], key="n")


def ref_attention(q, k, v, offsets, H, D, causal, scale):
    """float64 attention per sequence: q, k, v flat [total][H][D] lists."""
    total = offsets[-1]
    out = [[[0.0] * D for _ in range(H)] for _ in range(total)]
    lse = [[0.0] * total for _ in range(H)]
    for b in range(len(offsets) - 1):
        s, e = offsets[b], offsets[b + 1]
        for h in range(H):
            for i in range(s, e):
                last = i + 1 if causal else e
                sc = [scale * sum(q[i][h][d] * k[j][h][d] for d in range(D)) for j in range(s, last)]
                m = max(sc)
                w = [math.exp(x - m) for x in sc]
                z = sum(w)
                lse[h][i] = m + math.log(z)
                for d in range(D):
                    out[i][h][d] = sum(w[j - s] * v[j][h][d] for j in range(s, last)) / z
    return out, lse


@unittest.skipUnless(EMU, "needs TILE_INTERPRET=1 (the emulator)")
class JfaCore(unittest.TestCase):
    """JFA through the torch-free core (tile.jfa.Jfa) on emulator memory."""

    def setUp(self):
        self.j = jfa.Jfa()

    def tearDown(self):
        self.j.clear()

    def key(self, offsets, H=1, D=64, causal=False, passes=_lib.JFA_FWD, **kw):
        k = jfa.PlanKey(device=0, stream=None, offsets=tuple(offsets), heads=H, head_dim=D, causal=causal, num_q=0,
                        softmax_scale=0.0, window=0, window_left=0, window_right=0, softcap=0.0,
                        deterministic=False, passes=passes)
        return k._replace(**kw)

    def test_check_params_errors(self):
        with self.assertRaises(tile.TileInvalidArgument) as cm:
            jfa.Jfa.check_params(self.key([0, 5, 3]))
        self.assertIn("offsets", str(cm.exception))
        with self.assertRaisesRegex(tile.TileInvalidArgument, "head_dim"):
            jfa.Jfa.check_params(self.key([0, 5], D=96))
        with self.assertRaisesRegex(tile.TileInvalidArgument, "heads"):
            jfa.Jfa.check_params(self.key([0, 5], H=0))
        self.assertEqual(jfa.Jfa.check_params(self.key([0, 5, 9])), 9)
        self.assertTrue(jfa.Jfa.supports_backward(self.key([0, 5])))
        # whether a variant has a backward pass is the library's to say
        self.assertIn(jfa.Jfa.supports_backward(self.key([0, 5], softcap=5.0)), (True, False))

    def run_fwd(self, lengths, H, D, causal):
        offsets = jfa.offsets_from_lengths(lengths)
        T = offsets[-1]
        rnd = random.Random(sum(lengths) * 7 + H + D + causal)
        vals = {}
        bufs = {}
        for name in "qkv":
            bits = [bf16_bits(rnd.gauss(0, 1)) for _ in range(T * H * D)]
            vals[name] = [[[bf16_value(bits[(i * H + h) * D + d]) for d in range(D)] for h in range(H)]
                          for i in range(T)]
            b = tile.DeviceBuffer(max(2 * T * H * D, 16))
            if T:
                b.upload(array.array("H", bits))
            bufs[name] = b
        o = tile.DeviceBuffer(max(2 * T * H * D, 16))
        lse = tile.DeviceBuffer(max(4 * H * T, 16))

        def raw(b, dt, shape):
            strides = []
            acc = 1
            for n in reversed(shape):
                strides.insert(0, acc)
                acc *= n
            return jfa.RawTensor(b.ptr, shape, strides, dt)
        key = self.key(offsets, H, D, causal)
        self.j.forward(key, raw(bufs["q"], "bf16", (T, H, D)), raw(bufs["k"], "bf16", (T, H, D)),
                       raw(bufs["v"], "bf16", (T, H, D)), raw(o, "bf16", (T, H, D)), raw(lse, "f32", (H, T)))
        ob = array.array("H", [0] * (T * H * D))
        lb = array.array("f", [0.0] * (H * T))
        if T:
            o.download(ob)
            lse.download(lb)
        ref, rl = ref_attention(vals["q"], vals["k"], vals["v"], offsets, H, D, causal, 1 / math.sqrt(D))
        err = 0.0
        lerr = 0.0
        for i in range(T):
            for h in range(H):
                lerr = max(lerr, abs(lb[h * T + i] - rl[h][i]))
                for d in range(D):
                    err = max(err, abs(bf16_value(ob[(i * H + h) * D + d]) - ref[i][h][d]))
        return err, lerr

    def test_forward_vs_float64(self):
        for lengths, H, D, causal in (([3, 0, 20], 1, 64, False), ([17, 5], 2, 64, True), ([9], 1, 128, False)):
            err, lerr = self.run_fwd(lengths, H, D, causal)
            self.assertLess(err, 0.02, (lengths, H, D, causal))
            self.assertLess(lerr, 1e-3, (lengths, H, D, causal))

    def test_forward_tensor_errors(self):
        offsets = [0, 8]
        b = tile.DeviceBuffer(2 * 8 * 64)
        t = jfa.RawTensor(b.ptr, (8, 1, 64), (64, 64, 1), "bf16")
        lse = tile.DeviceBuffer(64)
        bad_lse = jfa.RawTensor(lse.ptr, (1, 8), (8, 1), "bf16")  # must be f32
        with self.assertRaisesRegex(tile.TileInvalidArgument, "lse"):
            self.j.forward(self.key(offsets), t, t, t, jfa.RawTensor(b.ptr, (8, 1, 64), (64, 64, 1), "bf16"),
                           bad_lse)
        o = tile.DeviceBuffer(2 * 8 * 64)
        with self.assertRaisesRegex(tile.TileInvalidArgument, "share"):  # o aliases q
            self.j.forward(self.key(offsets), t, t, t, t, jfa.RawTensor(lse.ptr, (1, 8), (8, 1), "f32"))
        del o


if __name__ == "__main__":
    unittest.main(verbosity=2)
