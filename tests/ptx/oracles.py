#!/usr/bin/env python3
"""oracles.py TILEC - properties of what tilec emits, checked by running the
PTX in a small simulator (ptxsim.py) against values computed here:

  masked   vector_add, softmax, layernorm and small masked copies (f32, bf16,
           i8, 2-D) at sizes that are not a multiple of the vector width
           (1000003, 2047, ...): no global load or store outside the
           arrays (the buffers are exactly n elements), every element in
           bounds written once with the right value;
  ring     ring(i, S) for S = 1..8: slot i % S and phase (i / S) % 2;
  tma      tma_load / tma_store / tma_store_add: the coordinates of
           cp.async.bulk.tensor are {col, row} (innermost first, PTX ISA),
           one copy per box of a view several boxes wide, at the right
           shared-memory address;
  swizzle  smem_store / smem_load of f32, bf16 and i8 tiles in views with
           128/64/32-byte swizzles, several column blocks, row slices and
           ring slots: every element at the byte the PTX ISA's swizzle
           (16-byte chunk XOR address bits 7-9) puts it, and nothing else
           written.

Each check runs for sm_90a and sm_100a (those that compile there).  Exit 1
on any failure; the simulator raising on an instruction it does not know is
a failure too.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxsim  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
TILEC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build', 'bin', 'tilec')
ONLY = sys.argv[2] if len(sys.argv) > 2 else None
TMP = tempfile.mkdtemp(prefix='oracles.')
ARCHS = ['sm_90a', 'sm_100a']
fails = 0
checks = 0


def fail(name, msg):
    global fails
    fails += 1
    print('FAIL %s: %s' % (name, msg))


def ok(name, cond, msg):
    global checks
    checks += 1
    if not cond:
        fail(name, msg)
    return cond


_cache = {}


def tilec(src, arch, emit='ptx', defs=()):
    """Compile a file (path) or a source text; returns the output text or
    None (the failure reported)."""
    key = (src, arch, emit, tuple(defs))
    if key in _cache:
        return _cache[key]
    if '\n' in src:
        path = os.path.join(TMP, 'k%d.tile' % len(_cache))
        with open(path, 'w') as f:
            f.write(src)
    else:
        path = os.path.join(ROOT, src)
    cmd = [TILEC, '--arch=' + arch, '--emit=' + emit, '-o', '-'] + [x for d in defs for x in ('-D', d)] + [path]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        fail(os.path.basename(path), 'tilec failed (%s):\n%s' % (' '.join(cmd), p.stderr))
        _cache[key] = None
    else:
        _cache[key] = p.stdout
    return _cache[key]


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def words(buf, fmt):
    n = len(buf) // struct.calcsize(fmt)
    return list(struct.unpack('<%d%s' % (n, fmt), bytes(buf)))


def simulate(name, ptx, kernel, params, ntid, mem, ctaids, nctaid):
    """Run the CTAs; report out-of-bounds accesses; True when it ran."""
    try:
        ks = ptxsim.parse(ptx)
        ctas = []
        for c in ctaids:
            cta = ptxsim.CTA(ks[kernel], mem, ntid, ctaid=c, nctaid=nctaid)
            cta.run(params)
            ctas.append(cta)
    except (ptxsim.Unsupported, ptxsim.SimError, KeyError) as e:
        fail(name, 'simulation: %s' % e)
        return None
    oob = [o for c in ctas for o in c.oob]
    ok(name, not oob, '%d global accesses outside the arrays, first: %s (thread %d, 0x%x, %d bytes)' %
       ((len(oob),) + (oob[0] if oob else ('', 0, 0, 0))))
    return ctas


def cdiv(a, b):
    return (a + b - 1) // b


def pick_ctas(nblk):
    """All blocks when few, else the first and the last two."""
    return list(range(nblk)) if nblk <= 4 else [0, nblk - 2, nblk - 1]


# ---- masked loads and stores ---------------------------------------------

SENT32 = 0x7fbadbad  # a NaN nobody computes


def check_vector_add(arch):
    ptx = tilec('examples/vector_add/vector_add.tile', arch)
    if ptx is None:
        return
    for n in (1, 5, 1000, 1027, 4099, 1000003):
        name = 'vector_add/%s n=%d' % (arch, n)
        mem = ptxsim.Memory()
        xs = [f32(i * 0.5) for i in range(n)]
        ys = [f32(1000.0 + i) for i in range(n)]
        x = mem.alloc(struct.pack('<%df' % n, *xs))
        y = mem.alloc(struct.pack('<%df' % n, *ys))
        out = mem.alloc(struct.pack('<I', SENT32) * n)
        nblk = cdiv(n, 1024)
        ctas = pick_ctas(nblk)
        if not simulate(name, ptx, 'vector_add', [x, y, out, n], 128, mem, [(c, 0, 0) for c in ctas], (nblk, 1, 1)):
            continue
        o = words(mem.buffer(out), 'I')
        bad = []
        for c in ctas:
            for i in range(c * 1024, min(n, c * 1024 + 1024)):
                want = struct.unpack('<I', struct.pack('<f', f32(xs[i] + ys[i])))[0]
                if o[i] != want:
                    bad.append(i)
        ok(name, not bad, '%d wrong elements, first %s' % (len(bad), bad[:5]))


def check_row_kernels(arch):
    """softmax and layernorm rows of n_cols that are not a multiple of 4,
    rows `stride` apart; the arrays end right after the last row's n_cols."""
    sm = tilec('examples/softmax/softmax.tile', arch)
    ln = tilec('examples/layernorm/layernorm.tile', arch)
    for n_cols, stride, rows in ((1001, 1004, 2), (3, 4, 2), (1023, 1023, 2), (513, 520, 3)):
        size = (rows - 1) * stride + n_cols
        vals = [f32(((i * 37) % 101) / 25.0 - 2.0) for i in range(size)]
        if sm is not None:
            name = 'softmax/%s n_cols=%d stride=%d' % (arch, n_cols, stride)
            mem = ptxsim.Memory()
            x = mem.alloc(struct.pack('<%df' % size, *vals))
            out = mem.alloc(struct.pack('<I', SENT32) * size)
            if simulate(name, sm, 'softmax', [x, out, n_cols, stride], 128, mem, [(r, 0, 0) for r in range(rows)],
                        (rows, 1, 1)):
                o = words(mem.buffer(out), 'f')
                bad = 0
                import math
                for r in range(rows):
                    row = vals[r * stride:r * stride + n_cols]
                    m = max(row)
                    e = [math.exp(v - m) for v in row]
                    s = sum(e)
                    for c in range(n_cols):
                        if abs(o[r * stride + c] - e[c] / s) > 1e-5 + 1e-3 * e[c] / s:
                            bad += 1
                ok(name, bad == 0, '%d elements differ from exp(x - max) / sum' % bad)
        if ln is not None:
            name = 'layernorm/%s n_cols=%d stride=%d' % (arch, n_cols, stride)
            mem = ptxsim.Memory()
            x = mem.alloc(struct.pack('<%df' % size, *vals))
            y = mem.alloc(struct.pack('<I', SENT32) * size)
            w = mem.alloc(struct.pack('<%df' % n_cols, *[f32(1.0 + c / 1000.0) for c in range(n_cols)]))
            b = mem.alloc(struct.pack('<%df' % n_cols, *[f32(c / 100.0) for c in range(n_cols)]))
            mo = mem.alloc(bytes(4 * rows))
            ro = mem.alloc(bytes(4 * rows))
            eps = struct.unpack('<I', struct.pack('<f', 1e-5))[0]
            if simulate(name, ln, 'layernorm', [x, y, w, b, mo, ro, n_cols, stride, eps], 128, mem,
                        [(r, 0, 0) for r in range(rows)], (rows, 1, 1)):
                o = words(mem.buffer(y), 'f')
                bad = 0
                for r in range(rows):
                    row = vals[r * stride:r * stride + n_cols]
                    mean = sum(row) / n_cols
                    var = sum((v - mean) ** 2 for v in row) / n_cols
                    rstd = 1.0 / (var + 1e-5) ** 0.5
                    for c in range(n_cols):
                        want = (row[c] - mean) * rstd * (1.0 + c / 1000.0) + c / 100.0
                        if abs(o[r * stride + c] - want) > 1e-3 * (1 + abs(want)):
                            bad += 1
                ok(name, bad == 0, '%d elements differ from (x - mean) * rstd * w + b' % bad)


MCOPY = '''
kernel mcopy(x: *{T}, out: *{T}, n: i32{ATTR}, const BLOCK: i32 = {BLOCK}) warps(4) {{
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    store(out + offs, load(x + offs, offs < n), offs < n);
}}
'''

MCOPY2D = '''
kernel mcopy2d(x: *f32, out: *f32, rows: i32, cols: i32, stride: i32 multiple_of(4)) warps(4) {
    let r = program_id(0) * 16 + arange(0, 16);
    let c = arange(0, 64);
    let m = (r[:, None] < rows) & (c[None, :] < cols);
    let off = r[:, None] * stride + c[None, :];
    store(out + off, load(x + off, m), m);
}
'''


def check_masked_copies(arch):
    cases = [('f32', 4, 'I', '', 1024, (1023, 1025, 4101)),
             ('bf16', 2, 'H', '', 2048, (2047, 2049, 4099, 7)),
             ('i8', 1, 'B', '', 4096, (4095, 4097, 13)),
             ('f32', 4, 'I', ' multiple_of(4)', 1024, (1028, 4096, 8))]  # vectors whole: legal to load at once
    for ty, eb, fmt, attr, block, sizes in cases:
        ptx = tilec(MCOPY.format(T=ty, ATTR=attr, BLOCK=block), arch)
        if ptx is None:
            continue
        for n in sizes:
            name = 'mcopy %s%s/%s n=%d' % (ty, attr, arch, n)
            mem = ptxsim.Memory()
            vals = [(i * 2654435761 + 12345) % (1 << (8 * eb)) for i in range(n)]
            if fmt == 'I':
                vals = [v & 0x3fffffff for v in vals]  # no NaN bit patterns
            x = mem.alloc(struct.pack('<%d%s' % (n, fmt), *vals))
            out = mem.alloc(b'\xa5' * (n * eb))
            nblk = cdiv(n, block)
            ctas = pick_ctas(nblk)
            if not simulate(name, ptx, 'mcopy', [x, out, n], 128, mem, [(c, 0, 0) for c in ctas], (nblk, 1, 1)):
                continue
            o = words(mem.buffer(out), fmt)
            bad = [i for c in ctas for i in range(c * block, min(n, (c + 1) * block)) if o[i] != vals[i]]
            ok(name, not bad, '%d elements not copied, first %s' % (len(bad), bad[:5]))
    ptx = tilec(MCOPY2D, arch)
    if ptx is None:
        return
    for rows, cols, stride in ((19, 61, 64), (16, 64, 64), (5, 3, 8), (33, 63, 68)):
        name = 'mcopy2d/%s %dx%d stride %d' % (arch, rows, cols, stride)
        size = (rows - 1) * stride + cols
        mem = ptxsim.Memory()
        vals = [i + 1 for i in range(size)]
        x = mem.alloc(struct.pack('<%dI' % size, *vals))
        out = mem.alloc(b'\0' * (4 * size))
        nblk = cdiv(rows, 16)
        if not simulate(name, ptx, 'mcopy2d', [x, out, rows, cols, stride], 128, mem,
                        [(c, 0, 0) for c in range(nblk)], (nblk, 1, 1)):
            continue
        o = words(mem.buffer(out), 'I')
        bad = [(r, c) for r in range(rows) for c in range(stride) if r * stride + c < size and
               o[r * stride + c] != (vals[r * stride + c] if c < cols else 0)]
        ok(name, not bad, '%d elements wrong (or padding written), first %s' % (len(bad), bad[:5]))


# ---- ring ----------------------------------------------------------------

RING = '''
kernel ring_seq(out: *i32, n: i32, const S: i32 = 3) warps(1) {
    for i in range(0, n) {
        let (s, ph) = ring(i, S);
        store(out + 2 * i, s);
        store(out + 2 * i + 1, ph);
    }
}
'''


def check_ring(arch):
    for S in range(1, 9):
        ptx = tilec(RING, arch, defs=['S=%d' % S])
        if ptx is None:
            continue
        n = 4 * S + 7
        name = 'ring/%s S=%d' % (arch, S)
        mem = ptxsim.Memory()
        out = mem.alloc(b'\xff' * (8 * n))
        if not simulate(name, ptx, 'ring_seq', [out, n], 32, mem, [(0, 0, 0)], (1, 1, 1)):
            continue
        o = words(mem.buffer(out), 'i')
        # the slot cycles 0..S-1; the phase flips each time the slot wraps
        want, slot, phase = [], 0, 0
        for i in range(n):
            want += [slot, phase]
            slot += 1
            if slot == S:
                slot, phase = 0, phase ^ 1
        i = next((j for j in range(n) if o[2 * j:2 * j + 2] != want[2 * j:2 * j + 2]), None)
        ok(name, i is None, 'step %s: (slot, phase) = %s, want %s' %
           (i, tuple(o[2 * i:2 * i + 2]) if i is not None else '', tuple(want[2 * i:2 * i + 2]) if i is not None else ''))


# ---- TMA coordinates -----------------------------------------------------

TMA = '''
kernel tma_k(a: tma<{T}, [{BR}, {BC}]>, row: i32, col: i32) warps(1) {{
    let buf = smem({T}, [{BR}, {VC}], buffers = 2, swizzle = {SW});
    let bar = mbarrier(2, arrive = 1);
    barrier_expect(bar[1], {BYTES});
    tma_load(a, [row, col], buf[1], bar[1]);
    barrier_wait(bar[1], 0);
    tma_store(a, [row + 8, col + {CS}], buf[1]);
    tma_store_wait(0);
    tma_store_add(a, [row, col + 2 * {CS}], buf[1]);
    tma_store_wait(0);
}}
'''


def smem_allocs(tir):
    """(offset, type text) of each smem_alloc and mbarrier_alloc, in order."""
    return [(int(m.group(2)), m.group(1), m.group(3)) for m in
            re.finditer(r'(smem_alloc|mbarrier_alloc) offset=(\d+)[^:]*: ([^@\n]*)', tir)]


def check_tma(arch):
    # (dtype, element bytes, box rows, box cols, view cols)
    for ty, eb, br, bc, vc in (('f32', 4, 16, 32, 64), ('bf16', 2, 64, 64, 128), ('bf16', 2, 24, 32, 32),
                               ('f16', 2, 8, 16, 64)):
        src = TMA.format(T=ty, BR=br, BC=bc, VC=vc, BYTES=br * vc * eb, CS=8, SW=min(128, bc * eb))
        ptx = tilec(src, arch)
        tir = tilec(src, arch, 'tir')
        if ptx is None or tir is None:
            continue
        allocs = [a for a in smem_allocs(tir) if a[1] == 'smem_alloc']
        sw = re.search(r'tma<%s, \[%d, %d\], swizzle (\d+)>' % (ty, br, bc), tir)
        swz = int(sw.group(1)) if sw else 0
        slot_bytes = br * vc * eb
        slot_stride = cdiv(slot_bytes, 1024 if swz else 128) * (1024 if swz else 128)
        slot1 = allocs[0][0] + slot_stride
        nbox = vc // bc
        box_bytes = br * (bc * eb)  # one box: its rows of bc elements (its column block)
        name = 'tma %s box [%d, %d] view [%d, %d]/%s' % (ty, br, bc, br, vc, arch)
        row, col = 1000, 24  # told apart by value (no box column reaches 1000)
        mem = ptxsim.Memory()
        ctas = simulate(name, ptx, 'tma_k', [b'\0' * 128, row, col], 32, mem, [(0, 0, 0)], (1, 1, 1))
        if not ctas:
            continue
        ev = [e for e in ctas[0].events if e[0].startswith('tma')]
        tmap = ptxsim.PARAM_BASE  # parameter 0
        want = []
        for kind, r0, c0 in (('tma_load', row, col), ('tma_store', row + 8, col + 8), ('tma_reduce', row, col + 16)):
            for j in range(nbox):
                want.append((kind, tmap, [c0 + j * bc, r0], slot1 + j * box_bytes))
        got = [(e[0], e[1], e[2], e[3]) for e in ev]
        ok(name, got == want, 'TMA copies (kind, map, {coords}, smem):\n    got  %s\n    want %s' % (got, want))
        loads = [e for e in ev if e[0] == 'tma_load']
        bars = [a[0] for a in smem_allocs(tir) if a[1] == 'mbarrier_alloc']
        ok(name, all(e[4] == bars[0] + 8 for e in loads), 'tma_load completes on bar[1] at %d: %s' %
           (bars[0] + 8 if bars else -1, [e[4] for e in loads]))
        ok(name, len(set(e[5] for e in ev)) == 1, 'copies issued by one thread: %s' % sorted(set(e[5] for e in ev)))


# ---- the swizzle of smem_store / smem_load ----------------------------------

def swizzle_offset(eb, S, block_rows, r, c):
    """Byte offset of element (r, c) from the start of a 1024-byte-aligned
    view with S-byte swizzle (0: none) and rows of `block_rows` per column
    block, per the PTX ISA (tensor copy swizzle modes): the view is boxes of
    S-byte rows side by side; within it, the 16-byte chunk bits 4-6 of the
    address are XORed with bits 7-9 (32B: bit 7 only, 64B: bits 7-8)."""
    if not S:
        raise ValueError
    per = S // eb
    lin = (c // per) * block_rows * S + r * S + (c % per) * eb
    mask = S // 16 - 1
    return lin ^ (((lin >> 7) & mask) << 4)


SWZ = '''
kernel st_k(x: *{T}) warps({W}) {{
    let v = smem({T}, [{AR}, {C}], buffers = 2, swizzle = {S});
    let r = arange(0, {R});
    let c = arange(0, {C});
    smem_store({VIEW}, load(x + r[:, None] * {C} + c[None, :]));
}}
kernel ld_k(out: *{T}) warps({W}) {{
    let v = smem({T}, [{AR}, {C}], buffers = 2, swizzle = {S});
    let r = arange(0, {R});
    let c = arange(0, {C});
    store(out + r[:, None] * {C} + c[None, :], smem_load({VIEW}));
}}
'''


def check_swizzle(arch):
    # (dtype, bytes, fmt, allocation rows, cols, swizzle, view expression, view rows, first row, warps)
    cases = [('f32', 4, 'I', 32, 32, 128, 'v[0]', 32, 0, 4),
             ('f32', 4, 'I', 16, 16, 64, 'v[1]', 16, 0, 4),
             ('f32', 4, 'I', 32, 8, 32, 'v[1]', 32, 0, 1),
             ('bf16', 2, 'H', 64, 64, 128, 'v[1]', 64, 0, 4),
             ('bf16', 2, 'H', 32, 32, 64, 'v[0]', 32, 0, 4),
             ('bf16', 2, 'H', 16, 16, 32, 'v[1]', 16, 0, 1),
             ('bf16', 2, 'H', 64, 128, 128, 'v[1]', 64, 0, 4),          # two column blocks
             ('bf16', 2, 'H', 128, 128, 128, 'v[1].slice(0, 64, 64)', 64, 64, 4),  # a row slice
             ('f32', 4, 'I', 16, 64, 128, 'v[0]', 16, 0, 2),            # two column blocks of f32
             ('i8', 1, 'B', 32, 128, 128, 'v[1]', 32, 0, 4),
             ('bf16', 2, 'H', 8, 32, 64, 'v[1]', 8, 0, 1),              # slots smaller than 1024 bytes
             ('f32', 4, 'I', 8, 8, 32, 'v[1]', 8, 0, 1)]
    for ty, eb, fmt, ar, C, S, view, R, r0, W in cases:
        src = SWZ.format(T=ty, AR=ar, C=C, S=S, VIEW=view, R=R, W=W)
        ptx = tilec(src, arch)
        tir = tilec(src, arch, 'tir')
        if ptx is None or tir is None:
            continue
        slot = int(re.search(r'\[(\d)\]', view).group(1))
        allocs = [a for a in smem_allocs(tir) if a[1] == 'smem_alloc']
        base = allocs[0][0] + slot * cdiv(ar * C * eb, 1024) * 1024
        name = 'swizzle %s smem [%d, %d] %dB %s/%s' % (ty, ar, C, S, view, arch)
        n = R * C
        want_at = {}
        for r in range(R):
            for c in range(C):
                want_at[base + swizzle_offset(eb, S, ar, r0 + r, c)] = r * C + c
        if len(set(want_at)) != n:
            fail(name, 'the oracle maps two elements to one byte')
            continue
        key = lambda i: (i * 40503 + 7) % (1 << (8 * eb)) if eb < 4 else i + 1
        # store: global -> shared, then read shared memory at the oracle's places
        mem = ptxsim.Memory()
        x = mem.alloc(struct.pack('<%d%s' % (n, fmt), *[key(i) for i in range(n)]))
        ctas = simulate(name + ' store', ptx, 'st_k', [x], 32 * W, mem, [(0, 0, 0)], (1, 1, 1))
        if ctas:
            sm, wr = ctas[0].smem, ctas[0].smem_written
            bad = [(off, i) for off, i in want_at.items()
                   if int.from_bytes(sm[off:off + eb], 'little') != key(i)]
            ok(name + ' store', not bad, '%d elements not where the swizzle puts them; first (byte, element (r, c)): %s'
               % (len(bad), [(o, divmod(i, C)) for o, i in sorted(bad)[:4]]))
            region = sum(wr[allocs[0][0]:allocs[0][0] + 2 * cdiv(ar * C * eb, 1024) * 1024])
            ok(name + ' store', region == n * eb, 'wrote %d bytes of the buffer, the view has %d' % (region, n * eb))
        # load: shared memory filled at the oracle's places -> global
        mem = ptxsim.Memory()
        out = mem.alloc(b'\0' * (n * eb))
        try:
            cta = ptxsim.CTA(ptxsim.parse(ptx)['ld_k'], mem, 32 * W)
            for off, i in want_at.items():
                cta.smem[off:off + eb] = key(i).to_bytes(eb, 'little')
            cta.run([out])
        except (ptxsim.Unsupported, ptxsim.SimError) as e:
            fail(name + ' load', 'simulation: %s' % e)
            continue
        o = words(mem.buffer(out), fmt)
        bad = [i for i in range(n) if o[i] != key(i)]
        ok(name + ' load', not bad, '%d elements read from the wrong bytes, first (r, c): %s' %
           (len(bad), [divmod(i, C) for i in bad[:4]]))


# stmatrix: a 16-bit tile in the mma.sync accumulator layout (a dot with
# zero operands plus a loaded tile), stored plainly and transposed
STM = '''
kernel stm_k(x: *f32) warps(4) {{
    let v = smem(bf16, [64, 64], buffers = 2, swizzle = {S});
    let r = arange(0, 64);
    let c = arange(0, 64);
    let acc = dot(zeros([64, 16], bf16), zeros([16, 64], bf16)) + load(x + r[:, None] * 64 + c[None, :]);
    smem_store(v[1], {X});
}}
'''


def check_stmatrix(arch):
    for S in (128, 64, 32):
        for trans in (False, True):
            src = STM.format(S=S, X='trans(acc as bf16)' if trans else 'acc as bf16')
            ptx = tilec(src, arch)
            tir = tilec(src, arch, 'tir')
            if ptx is None or tir is None:
                continue
            name = 'stmatrix%s bf16 [64, 64] %dB/%s' % (' trans' if trans else '', S, arch)
            ok(name, 'stmatrix.sync.aligned.m8n8.x4' + ('.trans' if trans else '') in ptx,
               'the store does not use stmatrix (the check below still runs)')
            allocs = [a for a in smem_allocs(tir) if a[1] == 'smem_alloc']
            base = allocs[0][0] + 8192  # slot 1: 64 x 64 bf16, 1024-byte aligned
            # distinct values exact in bf16: (1 + m / 128) * 2^(e - 16)
            vals = [(1 + (i % 128) / 128.0) * 2.0 ** (i // 128 - 16) for i in range(4096)]
            mem = ptxsim.Memory()
            x = mem.alloc(struct.pack('<4096f', *vals))
            ctas = simulate(name, ptx, 'stm_k', [x], 128, mem, [(0, 0, 0)], (1, 1, 1))
            if not ctas:
                continue
            sm, wr = ctas[0].smem, ctas[0].smem_written
            bad = []
            for r in range(64):
                for c in range(64):
                    vr, vc = (c, r) if trans else (r, c)
                    off = base + swizzle_offset(2, S, 64, vr, vc)
                    want = struct.unpack('<I', struct.pack('<f', vals[r * 64 + c]))[0] >> 16
                    if int.from_bytes(sm[off:off + 2], 'little') != want:
                        bad.append((r, c))
            ok(name, not bad, '%d elements not where the swizzle puts them, first %s' % (len(bad), bad[:4]))
            region = sum(wr[allocs[0][0]:allocs[0][0] + 2 * 8192])
            ok(name, region == 8192, 'wrote %d bytes of the buffer, the view has 8192' % region)


def main():
    tests = [('masked', check_vector_add), ('masked', check_row_kernels), ('masked', check_masked_copies),
             ('ring', check_ring), ('tma', check_tma), ('swizzle', check_swizzle), ('swizzle', check_stmatrix)]
    for arch in ARCHS:
        for group, fn in tests:
            if ONLY and ONLY != group:
                continue
            fn(arch)
    print('oracle checks (PTX simulated): %d/%d passed' % (checks - fails if checks >= fails else 0, checks))
    subprocess.run(['rm', '-rf', TMP])
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
