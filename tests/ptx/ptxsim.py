"""ptxsim.py - a small PTX interpreter for property tests of what tilec emits.

It runs one CTA of a kernel on the CPU, thread by thread, with the
instructions LLVM's NVPTX back end and tilec's inline assembly use in small
kernels: integer and f32 arithmetic, predicates and branches, global, shared
and parameter loads and stores (vectors too), warp collectives (redux.sync,
shfl.sync, vote, elect.sync) and stmatrix; TMA copies and mbarrier ops are
recorded (coordinates, addresses) rather than performed, and every
mbarrier wait succeeds at once.  It is not a GPU model: its purpose is an
oracle that does not come from the compiler (what addresses a kernel really
touches, what values it really stores), for tests/ptx/oracles.py.

Scheduling: the threads of the CTA advance together; each step runs the
instruction with the lowest program counter for every thread that is at it
(so diverged threads reconverge, warp collectives see their whole warp, and
bar.sync orders shared-memory traffic in straight-line code).  Anything it
does not know raises Unsupported: a test then fails loudly instead of
passing on a half-run kernel.
"""
import math
import re
import struct

GLOBAL_BASE = 0x100000000     # first global buffer; each buffer 2^32 apart
SHARED_GENERIC = 0x7e0000000000  # where cvta.shared puts the shared window
PARAM_BASE = 0x7f0000000000   # addresses of byte-array (.b8 x[N]) parameters


class Unsupported(Exception):
    pass


class SimError(Exception):
    pass


def _bits(t):
    if t in ('pred',):
        return 1
    m = re.match(r'^(?:bf|[bsuf])(\d+)(?:x(\d+))?$', t)
    if not m:
        raise Unsupported('type .%s' % t)
    return int(m.group(1)) * int(m.group(2) or 1)


def _mask(v, n):
    return v & ((1 << n) - 1)


def _sx(v, n):
    v = _mask(v, n)
    return v - (1 << n) if v >> (n - 1) else v


def _f32(bits):
    return struct.unpack('<f', struct.pack('<I', bits & 0xffffffff))[0]


def _to_f32(x):
    try:
        return struct.unpack('<I', struct.pack('<f', x))[0]
    except OverflowError:
        return 0x7f800000 if x > 0 else 0xff800000


def _f64(bits):
    return struct.unpack('<d', struct.pack('<Q', bits & 0xffffffffffffffff))[0]


def _to_f64(x):
    return struct.unpack('<Q', struct.pack('<d', x))[0]


def _bf16_to_f32bits(h):
    return (h & 0xffff) << 16


def _f32_to_bf16(bits):  # round to nearest even
    bits &= 0xffffffff
    if (bits & 0x7f800000) == 0x7f800000 and bits & 0x7fffff:
        return (bits >> 16) | 0x40
    return ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) & 0xffff


def _split_top(s, sep=','):
    """Split at sep outside brackets and braces."""
    out, depth, cur = [], 0, ''
    for ch in s:
        if ch in '[{(':
            depth += 1
        elif ch in ']})':
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur.strip())
            cur = ''
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


_ARITH = {'add', 'sub', 'mul', 'mad', 'fma', 'div', 'rem', 'min', 'max', 'neg', 'abs', 'setp', 'selp', 'ex2',
          'lg2', 'rcp', 'sqrt', 'rsqrt', 'shl', 'shr', 'and', 'or', 'xor', 'not'}


class Instr:
    __slots__ = ('pred', 'neg', 'op', 'mods', 'args', 'text', 'target')

    def __init__(self, pred, neg, opcode, args, text):
        self.pred, self.neg, self.text = pred, neg, text
        parts = opcode.split('.')
        self.op, self.mods = parts[0], parts[1:]
        self.args = args
        self.target = None


class Kernel:
    def __init__(self, name, params, instrs, labels):
        self.name, self.params, self.instrs, self.labels = name, params, instrs, labels


_LABEL = re.compile(r'^([A-Za-z_$][\w$]*)\s*:(?!:)')


def parse(ptx):
    """All kernels of a PTX text: {name: Kernel}."""
    text = re.sub(r'//[^\n]*', '', ptx)
    text = re.sub(r'(?m)^\s*\.(loc|file)\b[^\n]*$', '', text)  # directives with no ';'
    kernels = {}
    for m in re.finditer(r'\.entry\s+([\w$]+)\s*\(([^)]*)\)', text):
        name = m.group(1)
        params = []
        for p in _split_top(m.group(2)):
            pm = re.search(r'\.param\s+(.*?)\s*([\w$]+)\s*(\[(\d+)\])?\s*$', p, re.S)
            if not pm:
                raise Unsupported('parameter %r' % p)
            ty = pm.group(1)
            size = int(pm.group(4)) if pm.group(4) else _bits(re.findall(r'\.([bsuf]\d+)', ty)[-1]) // 8
            params.append((pm.group(2), size, bool(pm.group(3))))
        # the body: from the first { after the signature to its matching }
        i = text.index('{', m.end())
        depth, j = 0, i
        while True:
            if text[j] == '{':
                depth += 1
            elif text[j] == '}':
                depth -= 1
                if depth == 0:
                    break
            j += 1
        kernels[name] = _parse_body(name, params, text[i + 1:j])
    return kernels


def _parse_body(name, params, body):
    # statements (ending ';') and labels, each with its chain of scopes; a
    # '{' at the start of a statement opens a scope (inline asm), one inside
    # a statement is a vector operand
    stmts = []
    scope_stack, next_scope = [0], 1
    cur, i, n = '', 0, len(body)
    while i < n:
        ch = body[i]
        if ch == '{' and cur.strip():
            j = body.index('}', i)
            cur += body[i:j + 1]
            i = j + 1
            continue
        if ch == '{':
            scope_stack.append(next_scope)
            next_scope += 1
            cur = ''
        elif ch == '}':
            scope_stack.pop()
            cur = ''
        elif ch == ';':
            stmts.append((cur, tuple(scope_stack)))
            cur = ''
        elif ch == ':' and re.match(r'^\s*[A-Za-z_$][\w$]*$', cur) and body[i + 1:i + 2] != ':':
            stmts.append(('LABEL ' + cur.strip(), tuple(scope_stack)))
            cur = ''
        else:
            cur += ch
        i += 1
    # local names (labels and .reg declared inside an inner scope)
    local = {}  # scope -> set of names
    for s, chain in stmts:
        s = s.strip()
        if chain[-1] == 0:
            continue
        if s.startswith('LABEL '):
            local.setdefault(chain[-1], set()).add(s[6:])
        elif s.startswith('.reg'):
            for nm in _split_top(re.sub(r'^\.reg\s+\.\w+\s+', '', s)):
                local.setdefault(chain[-1], set()).add(nm.strip())

    def rename(tok, chain):
        for sc in reversed(chain):
            if sc in local and tok in local[sc]:
                return '%s#%d' % (tok, sc)
        return tok

    instrs, labels = [], {}
    for s, chain in stmts:
        s = s.strip()
        if not s:
            continue
        if s.startswith('LABEL '):
            labels[rename(s[6:], chain)] = len(instrs)
            continue
        if s.startswith('.') or s.startswith('@@'):
            continue  # .reg, .pragma, .loc, .shared decls, ...
        if chain[-1] != 0:
            s = re.sub(r'[%$]?[A-Za-z_][\w$]*', lambda mm: rename(mm.group(0), chain), s)
        pm = re.match(r'@(!?)(\S+)\s+(.*)$', s, re.S)
        pred, neg = None, False
        if pm:
            neg, pred, s = pm.group(1) == '!', pm.group(2), pm.group(3)
        parts = s.split(None, 1)
        opcode = parts[0]
        args = _split_top(parts[1]) if len(parts) > 1 else []
        instrs.append(Instr(pred, neg, opcode, args, s))
    for ins in instrs:
        if ins.op == 'bra':
            t = ins.args[0]
            if t not in labels:
                raise Unsupported('branch to unknown label %s' % t)
            ins.target = labels[t]
    return Kernel(name, params, instrs, labels)


class Memory:
    """Global buffers (bytearrays at GLOBAL_BASE + i * 2^32) and the log of
    every global access: (kind, addr, size, in_bounds)."""

    def __init__(self):
        self.bufs = []
        self.log = []

    def alloc(self, data):
        base = GLOBAL_BASE + len(self.bufs) * (1 << 32)
        self.bufs.append((base, bytearray(data)))
        return base

    def find(self, addr, size):
        for base, b in self.bufs:
            if base <= addr and addr + size <= base + len(b):
                return b, addr - base
        return None, None

    def buffer(self, base):
        for b0, b in self.bufs:
            if b0 == base:
                return b
        raise KeyError(base)


class CTA:
    """One thread block: run(kernel, params) with params a list of ints
    (pointers, scalars; bytes for byte-array parameters)."""

    def __init__(self, kernel, mem, ntid, ctaid=(0, 0, 0), nctaid=(1, 1, 1), smem_bytes=232448, max_steps=4000000):
        self.k, self.mem = kernel, mem
        self.ntid = ntid if isinstance(ntid, tuple) else (ntid, 1, 1)
        self.ctaid, self.nctaid = ctaid, nctaid
        self.smem = bytearray(smem_bytes)
        self.smem_written = bytearray(smem_bytes)  # 1 where a thread stored
        self.events = []  # TMA copies and the like, in order
        self.oob = []     # out-of-bounds global accesses (text, thread, addr, size)
        self.max_steps = max_steps

    # -- operands --------------------------------------------------------
    def _sym(self, name):
        if name == 'tile_smem':
            return 0
        for i, (pn, size, arr) in enumerate(self.k.params):
            if pn == name:
                return PARAM_BASE + i * 0x1000
        raise Unsupported('symbol %s' % name)

    def val(self, t, a, bits=64):
        regs = self.regs[t]
        if a in regs:
            return regs[a]
        if a[0] == '%':
            sp = self._special(t, a)
            if sp is not None:
                return sp
            return 0  # a register not written yet
        if a.startswith('0f'):
            return int(a[2:], 16)
        if a.startswith('0d'):
            return int(a[2:], 16)
        if re.match(r'^-?(0[xX][0-9a-fA-F]+|\d+)U?$', a):
            v = int(a.rstrip('U'), 0)
            return _mask(v, bits) if v < 0 else v
        return self._sym(a)

    def _special(self, t, a):
        tid = self.tid[t]
        sp = {'%tid.x': tid[0], '%tid.y': tid[1], '%tid.z': tid[2],
              '%ntid.x': self.ntid[0], '%ntid.y': self.ntid[1], '%ntid.z': self.ntid[2],
              '%ctaid.x': self.ctaid[0], '%ctaid.y': self.ctaid[1], '%ctaid.z': self.ctaid[2],
              '%nctaid.x': self.nctaid[0], '%nctaid.y': self.nctaid[1], '%nctaid.z': self.nctaid[2],
              '%laneid': t % 32, '%warpid': t // 32, '%nwarpid': (self.nthreads + 31) // 32,
              '%cluster_ctarank': 0, '%cluster_nctarank': 1, '%is_explicit_cluster': 0}
        return sp.get(a)

    def setr(self, t, a, v, bits):
        if a == '_':
            return
        self.regs[t][a] = _mask(v, bits) if bits > 1 else (1 if v else 0)

    def addr(self, t, a):
        m = re.match(r'^\[\s*([^\]+]+?)\s*(?:\+\s*(-?\w+))?\s*\]$', a)
        if not m:
            raise Unsupported('address %s' % a)
        base = self.val(t, m.group(1))
        off = int(m.group(2), 0) if m.group(2) else 0
        return base + off

    def vec(self, a):
        a = a.strip()
        if a.startswith('{'):
            return [x.strip() for x in a[1:-1].split(',')]
        return [a]

    # -- memory ------------------------------------------------------------
    def _space_of(self, space, addr):
        if space is None:  # generic
            if SHARED_GENERIC <= addr < SHARED_GENERIC + len(self.smem):
                return 'shared', addr - SHARED_GENERIC
            return 'global', addr
        return space, addr

    def load(self, t, ins, space, addr, size):
        space, addr = self._space_of(space, addr)
        if space == 'shared':
            if addr < 0 or addr + size > len(self.smem):
                raise SimError('%s: shared load at %d outside shared memory' % (ins.text, addr))
            return int.from_bytes(self.smem[addr:addr + size], 'little')
        if space == 'param':
            return self._param_load(addr, size)
        if space == 'global':
            b, off = self.mem.find(addr, size)
            self.mem.log.append(('ld', addr, size, b is not None))
            if b is None:
                self.oob.append((ins.text, t, addr, size))
                return 0
            return int.from_bytes(b[off:off + size], 'little')
        raise Unsupported('load from .%s' % space)

    def store(self, t, ins, space, addr, size, v):
        space, addr = self._space_of(space, addr)
        data = _mask(v, size * 8).to_bytes(size, 'little')
        if space == 'shared':
            if addr < 0 or addr + size > len(self.smem):
                raise SimError('%s: shared store at %d outside shared memory' % (ins.text, addr))
            self.smem[addr:addr + size] = data
            self.smem_written[addr:addr + size] = b'\1' * size
            return
        if space == 'global':
            b, off = self.mem.find(addr, size)
            self.mem.log.append(('st', addr, size, b is not None))
            if b is None:
                self.oob.append((ins.text, t, addr, size))
                return
            b[off:off + size] = data
            return
        raise Unsupported('store to .%s' % space)

    def _param_load(self, addr, size):
        i, off = divmod(addr - PARAM_BASE, 0x1000)
        v = self.params[i]
        if isinstance(v, (bytes, bytearray)):
            return int.from_bytes(v[off:off + size], 'little')
        return _mask(v >> (8 * off), size * 8)

    # -- running -----------------------------------------------------------
    def run(self, params):
        k = self.k
        if len(params) != len(k.params):
            raise SimError('%s takes %d parameters, %d given' % (k.name, len(k.params), len(params)))
        self.params = params
        nx, ny, nz = self.ntid
        self.nthreads = nx * ny * nz
        self.tid = [(t % nx, (t // nx) % ny, t // (nx * ny)) for t in range(self.nthreads)]
        self.regs = [dict() for _ in range(self.nthreads)]
        pc = [0] * self.nthreads
        done = [False] * self.nthreads
        steps = 0
        n = len(k.instrs)
        while True:
            live = [t for t in range(self.nthreads) if not done[t]]
            if not live:
                break
            p = min(pc[t] for t in live)
            if p >= n:
                raise SimError('%s: ran off the end of the kernel' % k.name)
            group = [t for t in live if pc[t] == p]
            ins = k.instrs[p]
            steps += len(group)
            if steps > self.max_steps:
                raise SimError('%s: more than %d thread-steps (a loop that never ends?)' % (k.name, self.max_steps))
            active = group
            if ins.pred:
                active = [t for t in group if bool(self.regs[t].get(ins.pred, 0)) != ins.neg]
            nxt = {}
            if active:
                try:
                    r = self.exec(ins, active)
                except (Unsupported, SimError) as e:
                    raise type(e)('%s (in: %s)' % (e, ins.text))
                if r:
                    nxt = r
            for t in group:
                x = nxt.get(t, p + 1)
                if x == -1:
                    done[t] = True
                else:
                    pc[t] = x
        return self

    def exec(self, ins, ts):
        op, mods, a = ins.op, ins.mods, ins.args
        f = getattr(self, 'op_' + op, None)
        ty = mods[-1] if mods else ''
        # arithmetic on types it does not model (f16, bf16, packed) must not
        # fall through to the integer code
        if f is None or (op in _ARITH and (ty in ('f16', 'bf16', 'f16x2', 'bf16x2', 'f64x2')
                                             or (ty == 'f32x2' and op not in ('add', 'sub', 'mul', 'fma')))):
            raise Unsupported('instruction %s' % '.'.join([op] + mods))
        return f(ins, ts, mods, a)

    # control
    def op_bra(self, ins, ts, mods, a):
        return {t: ins.target for t in ts}

    def op_ret(self, ins, ts, mods, a):
        return {t: -1 for t in ts}

    op_exit = op_ret

    # data movement
    def op_mov(self, ins, ts, mods, a):
        ty = mods[-1]
        bits = _bits(ty)
        for t in ts:
            if a[0].startswith('{'):  # unpack
                parts = self.vec(a[0])
                v = self.val(t, a[1])
                w = bits // len(parts)
                for i, r in enumerate(parts):
                    self.setr(t, r, v >> (i * w), w)
            elif a[1].startswith('{'):
                parts = self.vec(a[1])
                w = bits // len(parts)
                v = 0
                for i, r in enumerate(parts):
                    v |= _mask(self.val(t, r, w), w) << (i * w)
                self.setr(t, a[0], v, bits)
            else:
                self.setr(t, a[0], self.val(t, a[1], bits), bits)

    def _ldst_shape(self, mods):
        space = None
        nvec = 1
        for m in mods:
            if m in ('global', 'shared', 'param', 'local', 'const') or m.startswith('shared::'):
                space = m.split('::')[0]
            elif re.match(r'^v\d+$', m):
                nvec = int(m[1:])
        return space, nvec, _bits(mods[-1]) // 8

    def op_ld(self, ins, ts, mods, a):
        space, nvec, size = self._ldst_shape(mods)
        dsts = self.vec(a[0])
        if len(dsts) != nvec:
            raise SimError('vector width mismatch')
        for t in ts:
            ad = self.addr(t, a[1])
            for i, d in enumerate(dsts):
                self.setr(t, d, self.load(t, ins, space, ad + i * size, size), size * 8)

    def op_st(self, ins, ts, mods, a):
        space, nvec, size = self._ldst_shape(mods)
        srcs = self.vec(a[1])
        if len(srcs) != nvec:
            raise SimError('vector width mismatch')
        for t in ts:
            ad = self.addr(t, a[0])
            for i, s in enumerate(srcs):
                self.store(t, ins, space, ad + i * size, size, self.val(t, s, size * 8))

    def op_cvta(self, ins, ts, mods, a):
        to = 'to' in mods
        sp = [m for m in mods if m in ('global', 'shared', 'param', 'local', 'const')][0]
        for t in ts:
            v = self.val(t, a[1])
            if sp == 'shared':
                v = v - SHARED_GENERIC if to else v + SHARED_GENERIC
            self.setr(t, a[0], v, 64)

    # integer and bit arithmetic
    def _bin(self, ts, a, bits, fn):
        for t in ts:
            self.setr(t, a[0], fn(self.val(t, a[1], bits), self.val(t, a[2], bits)), bits)

    def _f32x2(self, ts, a, fn):
        """A packed pair of f32 in a 64-bit register (sm_100a's add/mul/fma.f32x2)."""
        for t in ts:
            xs = [self.val(t, r, 64) for r in a[1:]]
            v = 0
            for h in range(2):
                args = [_f32(x >> (32 * h)) for x in xs]
                v |= _to_f32(fn(*args)) << (32 * h)
            self.setr(t, a[0], v, 64)

    def op_add(self, ins, ts, mods, a):
        ty = mods[-1]
        if ty == 'f32x2':
            return self._f32x2(ts, a, lambda x, y: x + y)
        if ty == 'f32':
            return self._bin(ts, a, 32, lambda x, y: _to_f32(_f32(x) + _f32(y)))
        if ty == 'f64':
            return self._bin(ts, a, 64, lambda x, y: _to_f64(_f64(x) + _f64(y)))
        self._bin(ts, a, _bits(ty), lambda x, y: x + y)

    def op_sub(self, ins, ts, mods, a):
        ty = mods[-1]
        if ty == 'f32x2':
            return self._f32x2(ts, a, lambda x, y: x - y)
        if ty == 'f32':
            return self._bin(ts, a, 32, lambda x, y: _to_f32(_f32(x) - _f32(y)))
        self._bin(ts, a, _bits(ty), lambda x, y: x - y)

    def op_mul(self, ins, ts, mods, a):
        ty = mods[-1]
        if ty == 'f32x2':
            return self._f32x2(ts, a, lambda x, y: x * y)
        bits = _bits(ty)
        if ty == 'f32':
            return self._bin(ts, a, 32, lambda x, y: _to_f32(_f32(x) * _f32(y)))
        sgn = ty[0] == 's'
        conv = (lambda v: _sx(v, bits)) if sgn else (lambda v: _mask(v, bits))
        for t in ts:
            x, y = conv(self.val(t, a[1], bits)), conv(self.val(t, a[2], bits))
            p = x * y
            if 'wide' in mods:
                self.setr(t, a[0], p, 2 * bits)
            elif 'hi' in mods:
                self.setr(t, a[0], p >> bits, bits)
            else:
                self.setr(t, a[0], p, bits)

    def op_mad(self, ins, ts, mods, a):
        ty = mods[-1]
        bits = _bits(ty)
        if ty == 'f32':
            for t in ts:
                v = _f32(self.val(t, a[1])) * _f32(self.val(t, a[2])) + _f32(self.val(t, a[3]))
                self.setr(t, a[0], _to_f32(v), 32)
            return
        sgn = ty[0] == 's'
        conv = (lambda v: _sx(v, bits)) if sgn else (lambda v: _mask(v, bits))
        for t in ts:
            x, y = conv(self.val(t, a[1], bits)), conv(self.val(t, a[2], bits))
            if 'wide' in mods:
                self.setr(t, a[0], x * y + self.val(t, a[3], 2 * bits), 2 * bits)
            elif 'hi' in mods:
                self.setr(t, a[0], ((x * y) >> bits) + self.val(t, a[3], bits), bits)
            else:
                self.setr(t, a[0], x * y + self.val(t, a[3], bits), bits)

    def op_fma(self, ins, ts, mods, a):
        if mods[-1] == 'f32x2':
            return self._f32x2(ts, a, lambda x, y, z: x * y + z)
        if mods[-1] != 'f32':
            raise Unsupported('fma.' + '.'.join(mods))
        for t in ts:
            v = _f32(self.val(t, a[1])) * _f32(self.val(t, a[2])) + _f32(self.val(t, a[3]))
            self.setr(t, a[0], _to_f32(v), 32)

    def _f32_unary(self, ts, a, fn):
        for t in ts:
            x = _f32(self.val(t, a[1]))
            try:
                v = fn(x)
            except (ValueError, ZeroDivisionError, OverflowError):
                v = math.nan
            self.setr(t, a[0], _to_f32(v), 32)

    def op_ex2(self, ins, ts, mods, a):
        self._f32_unary(ts, a, lambda x: 0.0 if x == -math.inf else 2.0 ** x)

    def op_lg2(self, ins, ts, mods, a):
        self._f32_unary(ts, a, lambda x: -math.inf if x == 0 else math.log2(x))

    def op_rcp(self, ins, ts, mods, a):
        self._f32_unary(ts, a, lambda x: 1.0 / x)

    def op_sqrt(self, ins, ts, mods, a):
        self._f32_unary(ts, a, math.sqrt)

    def op_rsqrt(self, ins, ts, mods, a):
        self._f32_unary(ts, a, lambda x: 1.0 / math.sqrt(x))

    def _divrem(self, ts, a, mods, rem):
        ty = mods[-1]
        bits = _bits(ty)
        sgn = ty[0] == 's'
        for t in ts:
            x, y = self.val(t, a[1], bits), self.val(t, a[2], bits)
            if sgn:
                x, y = _sx(x, bits), _sx(y, bits)
            else:
                x, y = _mask(x, bits), _mask(y, bits)
            if y == 0:
                raise SimError('division by zero')
            q = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
            self.setr(t, a[0], x - q * y if rem else q, bits)

    def op_div(self, ins, ts, mods, a):
        if mods[-1] == 'f32':
            return self._bin(ts, a, 32, lambda x, y: _to_f32(_f32(x) / _f32(y)))
        self._divrem(ts, a, mods, False)

    def op_rem(self, ins, ts, mods, a):
        self._divrem(ts, a, mods, True)

    def _minmax(self, ts, a, mods, fn):
        ty = mods[-1]
        bits = _bits(ty)
        if ty == 'f32':
            return self._bin(ts, a, 32, lambda x, y: _to_f32(fn(_f32(x), _f32(y))))
        conv = (lambda v: _sx(v, bits)) if ty[0] == 's' else (lambda v: _mask(v, bits))
        self._bin(ts, a, bits, lambda x, y: fn(conv(x), conv(y)))

    def op_min(self, ins, ts, mods, a):
        self._minmax(ts, a, mods, min)

    def op_max(self, ins, ts, mods, a):
        self._minmax(ts, a, mods, max)

    def op_neg(self, ins, ts, mods, a):
        ty = mods[-1]
        for t in ts:
            v = self.val(t, a[1])
            self.setr(t, a[0], v ^ 0x80000000 if ty == 'f32' else -v, _bits(ty))

    def op_abs(self, ins, ts, mods, a):
        ty = mods[-1]
        bits = _bits(ty)
        for t in ts:
            v = self.val(t, a[1])
            self.setr(t, a[0], v & 0x7fffffff if ty == 'f32' else abs(_sx(v, bits)), bits)

    def _logic(self, ts, a, mods, fn):
        ty = mods[-1]
        bits = _bits(ty)
        self._bin(ts, a, bits, fn)

    def op_and(self, ins, ts, mods, a):
        self._logic(ts, a, mods, lambda x, y: x & y)

    def op_or(self, ins, ts, mods, a):
        self._logic(ts, a, mods, lambda x, y: x | y)

    def op_xor(self, ins, ts, mods, a):
        self._logic(ts, a, mods, lambda x, y: x ^ y)

    def op_not(self, ins, ts, mods, a):
        bits = _bits(mods[-1])
        for t in ts:
            self.setr(t, a[0], ~self.val(t, a[1]) if bits > 1 else not self.val(t, a[1]), bits)

    def op_shl(self, ins, ts, mods, a):
        bits = _bits(mods[-1])
        self._bin(ts, a, bits, lambda x, y: 0 if _mask(y, 32) >= bits else x << _mask(y, 32))

    def op_shr(self, ins, ts, mods, a):
        ty = mods[-1]
        bits = _bits(ty)
        for t in ts:
            x, y = self.val(t, a[1], bits), _mask(self.val(t, a[2], 32), 32)
            y = min(y, bits)
            v = _sx(x, bits) >> y if ty[0] == 's' else _mask(x, bits) >> y
            self.setr(t, a[0], v, bits)

    def op_bfe(self, ins, ts, mods, a):
        ty = mods[-1]
        bits = _bits(ty)
        for t in ts:
            x = _mask(self.val(t, a[1], bits), bits)
            pos, ln = self.val(t, a[2]) & 0xff, self.val(t, a[3]) & 0xff
            if ty[0] == 's':  # the field, with the sign of its top bit (bits past a's msb copy a's sign)
                f = _sx(x, bits) >> min(pos, bits)
                v = 0 if ln == 0 else f if ln >= bits else _sx(f & ((1 << ln) - 1), ln)
            else:
                v = (x >> pos) & ((1 << ln) - 1) if pos < bits else 0
            self.setr(t, a[0], v, bits)

    def op_bfi(self, ins, ts, mods, a):
        bits = _bits(mods[-1])
        for t in ts:
            f, b = self.val(t, a[1], bits), self.val(t, a[2], bits)
            pos, ln = self.val(t, a[3]) & 0xff, self.val(t, a[4]) & 0xff
            m = ((1 << ln) - 1) << pos
            self.setr(t, a[0], (b & ~m) | ((f << pos) & m), bits)

    def op_popc(self, ins, ts, mods, a):
        bits = _bits(mods[-1])
        for t in ts:
            self.setr(t, a[0], bin(_mask(self.val(t, a[1]), bits)).count('1'), 32)

    def op_clz(self, ins, ts, mods, a):
        bits = _bits(mods[-1])
        for t in ts:
            x = _mask(self.val(t, a[1]), bits)
            self.setr(t, a[0], bits - x.bit_length(), 32)

    def op_brev(self, ins, ts, mods, a):
        bits = _bits(mods[-1])
        for t in ts:
            x = _mask(self.val(t, a[1]), bits)
            self.setr(t, a[0], int(format(x, '0%db' % bits)[::-1], 2), bits)

    def op_prmt(self, ins, ts, mods, a):
        for t in ts:
            x = _mask(self.val(t, a[1]), 32) | (_mask(self.val(t, a[2]), 32) << 32)
            s = self.val(t, a[3])
            v = 0
            for i in range(4):
                sel = (s >> (4 * i)) & 0xf
                byte = (x >> (8 * (sel & 7))) & 0xff
                if sel & 8:
                    byte = 0xff if byte & 0x80 else 0
                v |= byte << (8 * i)
            self.setr(t, a[0], v, 32)

    def op_selp(self, ins, ts, mods, a):
        bits = _bits(mods[-1])
        for t in ts:
            self.setr(t, a[0], self.val(t, a[1], bits) if self.val(t, a[3]) else self.val(t, a[2], bits), bits)

    def op_setp(self, ins, ts, mods, a):
        cmp, ty = mods[0], mods[-1]
        comb = [m for m in mods[1:-1] if m in ('and', 'or', 'xor')]
        bits = _bits(ty)
        dsts = a[0].split('|')
        for t in ts:
            x, y = self.val(t, a[1], bits), self.val(t, a[2], bits)
            if ty == 'f32':
                x, y = _f32(x), _f32(y)
            elif ty[0] == 's':
                x, y = _sx(x, bits), _sx(y, bits)
            else:
                x, y = _mask(x, bits), _mask(y, bits)
            r = {'eq': x == y, 'ne': x != y, 'lt': x < y, 'le': x <= y, 'gt': x > y, 'ge': x >= y,
                 'lo': x < y, 'ls': x <= y, 'hi': x > y, 'hs': x >= y,
                 'equ': x == y, 'neu': x != y, 'ltu': x < y, 'leu': x <= y, 'gtu': x > y, 'geu': x >= y}.get(cmp)
            if r is None:
                raise Unsupported('setp.%s' % cmp)
            if comb:
                c = self.val(t, a[3].lstrip('!'))
                c = (not c) if a[3].startswith('!') else bool(c)
                r = {'and': r and c, 'or': r or c, 'xor': r != c}[comb[0]]
            self.setr(t, dsts[0], r, 1)
            if len(dsts) > 1:
                self.setr(t, dsts[1], not r, 1)

    def op_cvt(self, ins, ts, mods, a):
        tys = [m for m in mods if re.match(r'^([bsuf]\d+|bf16|bf16x2|f16x2)$', m)]
        dt, st = tys[0], tys[-1]
        for t in ts:
            if dt == 'bf16x2':  # cvt.rn.bf16x2.f32 d, hi, lo
                hi, lo = _f32_to_bf16(self.val(t, a[1])), _f32_to_bf16(self.val(t, a[2]))
                self.setr(t, a[0], (hi << 16) | lo, 32)
                continue
            v = self.val(t, a[1])
            if st[0] in 'su' or st[0] == 'b':
                sb = _bits(st)
                x = _sx(v, sb) if st[0] == 's' else _mask(v, sb)
                if dt == 'f32':
                    self.setr(t, a[0], _to_f32(float(x)), 32)
                elif dt == 'f64':
                    self.setr(t, a[0], _to_f64(float(x)), 64)
                else:
                    self.setr(t, a[0], x, _bits(dt))
            elif st == 'f32':
                x = _f32(v)
                if dt == 'bf16':
                    self.setr(t, a[0], _f32_to_bf16(v), 16)
                elif dt == 'f64':
                    self.setr(t, a[0], _to_f64(x), 64)
                elif dt[0] in 'su':
                    if 'rni' in mods:
                        x = round(x)
                    elif 'rmi' in mods:
                        x = int(x // 1)
                    else:
                        x = int(x)
                    self.setr(t, a[0], x, _bits(dt))
                elif dt == 'f32':
                    if 'rni' in mods:
                        x = float(round(x))
                    self.setr(t, a[0], _to_f32(x), 32)
                else:
                    raise Unsupported('cvt .%s.%s' % (dt, st))
            elif st == 'bf16':
                if dt != 'f32':
                    raise Unsupported('cvt .%s.%s' % (dt, st))
                self.setr(t, a[0], _bf16_to_f32bits(v), 32)
            else:
                raise Unsupported('cvt .%s.%s' % (dt, st))

    # warp collectives: the group at this pc must hold the whole warp
    def _warps(self, ts, a_mask):
        warps = {}
        for t in ts:
            warps.setdefault(t // 32, []).append(t)
        for w, lanes in warps.items():
            full = [t for t in range(w * 32, min(w * 32 + 32, self.nthreads))]
            if lanes != full and a_mask in ('-1', '0xffffffff', '0xFFFFFFFF', '4294967295'):
                raise SimError('warp %d reaches a full-warp collective with lanes %s only' % (w, lanes))
        return warps

    def op_redux(self, ins, ts, mods, a):
        kind, ty = mods[1], mods[-1]
        warps = self._warps(ts, a[2])
        for w, lanes in warps.items():
            vals = [self.val(t, a[1], 32) for t in lanes]
            if ty[0] == 's':
                vals = [_sx(v, 32) for v in vals]
            r = {'min': min, 'max': max, 'add': sum}.get(kind)
            if r:
                v = r(vals)
            else:
                v = vals[0]
                for x in vals[1:]:
                    v = v & x if kind == 'and' else v | x if kind == 'or' else v ^ x
            for t in lanes:
                self.setr(t, a[0], v, 32)

    def op_shfl(self, ins, ts, mods, a):
        mode = mods[1]
        warps = self._warps(ts, a[4])
        for w, lanes in warps.items():
            src = {t % 32: self.val(t, a[1], 32) for t in lanes}
            for t in lanes:
                lane = t % 32
                b, c = self.val(t, a[2]) & 31, self.val(t, a[3])
                clamp, segmask = c & 31, (c >> 8) & 31
                maxl = (lane & segmask) | (clamp & ~segmask)
                minl = lane & segmask
                j = {'up': lane - b, 'down': lane + b, 'bfly': lane ^ b,
                     'idx': minl | (b & ~segmask)}[mode]
                ok = j >= maxl if mode == 'up' else j <= maxl
                if not ok:
                    j = lane
                dst = a[0].split('|')
                self.setr(t, dst[0], src.get(j, 0), 32)
                if len(dst) > 1:
                    self.setr(t, dst[1], ok, 1)

    def op_vote(self, ins, ts, mods, a):
        kind = mods[1]
        warps = self._warps(ts, a[-1])
        for w, lanes in warps.items():
            ps = [bool(self.val(t, a[1].lstrip('!'))) != a[1].startswith('!') for t in lanes]
            for t in lanes:
                if kind == 'ballot':
                    self.setr(t, a[0], sum(1 << (u % 32) for u, p in zip(lanes, ps) if p), 32)
                elif kind == 'all':
                    self.setr(t, a[0], all(ps), 1)
                elif kind == 'any':
                    self.setr(t, a[0], any(ps), 1)
                else:
                    raise Unsupported('vote.%s' % kind)

    def op_elect(self, ins, ts, mods, a):
        warps = self._warps(ts, a[1])
        for w, lanes in warps.items():
            leader = min(lanes)
            for t in lanes:
                dst = a[0].split('|')
                if dst[0] != '_':
                    self.setr(t, dst[0], leader % 32, 32)
                if len(dst) > 1:
                    self.setr(t, dst[1], t == leader, 1)

    def op_activemask(self, ins, ts, mods, a):
        warps = self._warps(ts, '0')
        for w, lanes in warps.items():
            for t in lanes:
                self.setr(t, a[0], sum(1 << (u % 32) for u in lanes), 32)

    def op_stmatrix(self, ins, ts, mods, a):
        """stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 [addr], {r...}:
        matrix i's row j goes to the address held by lane 8i + j; lane l holds,
        in register i, elements (l / 4, 2 (l % 4)) and (l / 4, 2 (l % 4) + 1)
        of matrix i (transposed: (2 (l % 4), l / 4) and (2 (l % 4) + 1, l / 4))."""
        nmat = int([m for m in mods if m.startswith('x')][0][1:])
        trans = 'trans' in mods
        warps = self._warps(ts, '-1')
        for w, lanes in warps.items():
            if len(lanes) != 32:
                raise SimError('stmatrix with a partial warp')
            addrs = {t % 32: self.addr(t, a[0]) for t in lanes}
            regs = {t % 32: self.vec(a[1]) for t in lanes}
            for i in range(nmat):
                for lane in range(32):
                    t = w * 32 + lane
                    v = self.val(t, regs[lane][i], 32)
                    for h in range(2):
                        r, c = lane // 4, 2 * (lane % 4) + h
                        if trans:
                            r, c = c, r
                        ad = addrs[8 * i + r] + 2 * c
                        self.store(t, ins, 'shared', ad, 2, v >> (16 * h))

    def op_mma(self, ins, ts, mods, a):
        """mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32
        (PTX ISA fragments: groupID = lane / 4, t = lane % 4; A a0 (g, 2t..),
        a1 (g + 8, 2t..), a2 (g, 2t + 8..), a3 (g + 8, 2t + 8..); B b0 (2t..,
        g), b1 (2t + 8.., g); C/D c0 (g, 2t), c1 (g, 2t + 1), c2 (g + 8, 2t),
        c3 (g + 8, 2t + 1))."""
        if 'm16n8k16' not in mods or mods[-4:] not in (['f32', 'bf16', 'bf16', 'f32'], ['f32', 'f16', 'f16', 'f32']):
            raise Unsupported('mma.' + '.'.join(mods))
        half = mods[-3]

        def h2f(h):
            if half == 'bf16':
                return _f32(_bf16_to_f32bits(h))
            return struct.unpack('<e', struct.pack('<H', h & 0xffff))[0]
        warps = self._warps(ts, '-1')
        for w, lanes in warps.items():
            if len(lanes) != 32:
                raise SimError('mma.sync with a partial warp')
            A = [[0.0] * 16 for _ in range(16)]
            B = [[0.0] * 8 for _ in range(16)]
            C = [[0.0] * 8 for _ in range(16)]
            for t in lanes:
                lane = t % 32
                g, q = lane // 4, lane % 4
                ar, br, cr = self.vec(a[1]), self.vec(a[2]), self.vec(a[3])
                for i, (r, c) in enumerate(((g, 2 * q), (g + 8, 2 * q), (g, 2 * q + 8), (g + 8, 2 * q + 8))):
                    v = self.val(t, ar[i], 32)
                    A[r][c], A[r][c + 1] = h2f(v), h2f(v >> 16)
                for i, k in enumerate((2 * q, 2 * q + 8)):
                    v = self.val(t, br[i], 32)
                    B[k][g], B[k + 1][g] = h2f(v), h2f(v >> 16)
                for i, (r, c) in enumerate(((g, 2 * q), (g, 2 * q + 1), (g + 8, 2 * q), (g + 8, 2 * q + 1))):
                    C[r][c] = _f32(self.val(t, cr[i], 32))
            for t in lanes:
                lane = t % 32
                g, q = lane // 4, lane % 4
                dr = self.vec(a[0])
                for i, (r, c) in enumerate(((g, 2 * q), (g, 2 * q + 1), (g + 8, 2 * q), (g + 8, 2 * q + 1))):
                    v = C[r][c] + sum(A[r][k] * B[k][c] for k in range(16))
                    self.setr(t, dr[i], _to_f32(v), 32)

    # synchronization and asynchronous copies: recorded or nothing
    def _nop(self, ins, ts, mods, a):
        return None

    op_bar = op_barrier = op_fence = op_membar = op_setmaxnreg = op_griddepcontrol = op_prefetch = _nop

    def op_mbarrier(self, ins, ts, mods, a):
        kind = mods[0]
        if kind in ('try_wait', 'test_wait'):
            for t in ts:
                self.setr(t, a[0], 1, 1)
        elif kind == 'arrive' or kind == 'arrive_drop':
            for t in ts:
                if a and not a[0].startswith('['):
                    self.setr(t, a[0], 0, 64)
            self.events.append(('mbarrier.' + '.'.join(mods), len(ts)))
        elif kind in ('init', 'expect_tx', 'inval'):
            self.events.append(('mbarrier.' + '.'.join(mods), len(ts)))
        else:
            raise Unsupported('mbarrier.%s' % kind)

    def op_cp(self, ins, ts, mods, a):
        name = '.'.join(['cp'] + mods)
        if name.startswith('cp.async.bulk.tensor') or name.startswith('cp.reduce.async.bulk.tensor'):
            return self._tma(ins, ts, mods, a, name)
        if name.startswith('cp.async.bulk.commit_group') or name.startswith('cp.async.bulk.wait_group') \
                or name.startswith('cp.async.commit_group') or name.startswith('cp.async.wait'):
            return None
        raise Unsupported(name)

    def _tma(self, ins, ts, mods, a, name):
        """A TMA copy: recorded as (kind, tensor map, coordinates innermost
        first, shared-memory address, mbarrier address, thread)."""
        dims = [i for i, m in enumerate(mods) if re.match(r'^\dd$', m)]
        if not dims:
            raise Unsupported(name)
        load = mods[dims[0] + 1].startswith('shared')  # the destination's space comes first
        for t in ts:
            if load:  # [smem], [tmap, {coords}], [mbar]
                m = re.match(r'^\[\s*([^,]+?)\s*,\s*(\{[^}]*\})\s*\]$', a[1])
                coords = [_sx(self.val(t, c, 32), 32) for c in self.vec(m.group(2))]
                self.events.append(('tma_load', self.val(t, m.group(1)), coords, self.addr(t, a[0]),
                                    self.addr(t, a[2]) if len(a) > 2 else None, t))
            else:      # [tmap, {coords}], [smem]
                m = re.match(r'^\[\s*([^,]+?)\s*,\s*(\{[^}]*\})\s*\]$', a[0])
                coords = [_sx(self.val(t, c, 32), 32) for c in self.vec(m.group(2))]
                kind = 'tma_reduce' if name.startswith('cp.reduce') else 'tma_store'
                self.events.append((kind, self.val(t, m.group(1)), coords, self.addr(t, a[1]), None, t))


def run_kernel(ptx_text, name, params, ntid, mem, ctaid=(0, 0, 0), nctaid=(1, 1, 1), **kw):
    """Parse (or take parsed) PTX and run one CTA; returns the CTA."""
    ks = parse(ptx_text) if isinstance(ptx_text, str) else ptx_text
    return CTA(ks[name], mem, ntid, ctaid, nctaid, **kw).run(params)
