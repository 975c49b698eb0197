#!/usr/bin/env python3
"""tests/fuzz/adversarial.py - hand-made hostile inputs for tilec.

Writes each input to build-fuzz/adv/NAME.tile, runs
    TILEC --emit=tir [extra args] NAME.tile
with a 10 s limit and checks that the exit status is 0 or 1 (no signal, no
internal error, no hang) and that it takes under 5 s.

    python3 tests/fuzz/adversarial.py [TILEC] [--only SUBSTR]

TILEC defaults to build/bin/tilec.  Exit status 1 when a case fails.
"""
import os, random, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TILEC = os.path.join(ROOT, "build/bin/tilec")
only = None
args = sys.argv[1:]
while args:
    a = args.pop(0)
    if a == "--only": only = args.pop(0)
    else: TILEC = os.path.abspath(a)
OUT = os.path.join(ROOT, "build-fuzz/adv")
os.makedirs(OUT, exist_ok=True)

K = "kernel k(x: *f32, n: i32) {\n"
def kern(body): return (K + body + "\n}\n").encode()

cases = []  # (name, bytes, extra args)
def case(name, data, extra=()): cases.append((name, data if isinstance(data, bytes) else data.encode(), list(extra)))

rnd = random.Random(1234)
case("random_1mb", bytes(rnd.getrandbits(8) for _ in range(1 << 20)))
N = 100000
case("paren_100k_top", "(" * N)
case("paren_100k", kern("let a = " + "(" * N + "1" + ")" * N + ";"))
case("paren_100k_open", kern("let a = " + "(" * N))
case("brace_100k_top", "{" * N)
case("brace_100k", kern("{" * N + "}" * N))
case("brace_100k_open", kern("{" * N))
case("brack_100k", kern("let a = " + "[" * N + "1" + "]" * N + ";"))
case("brack_100k_open", kern("let a = " + "[" * N))
case("unary_minus_100k", kern("let a = " + "-" * N + "1;"))
case("not_100k", kern("let a = " + "!" * N + "true;"))
# binary/postfix/cast chains are parsed by loops, not recursion: the tree is
# deep on the left although the parser's depth counter stays at 1.
case("binary_chain_100k", kern("let a = 1" + " + 1" * N + ";"))
case("binary_chain_rt_100k", kern("let a = n" + " + n" * N + ";"))
case("binary_chain_1m", kern("let a = 1" + "+1" * 1000000 + ";"))
case("cast_chain_100k", kern("let a = n" + " as i32" * N + ";"))
case("index_chain_100k", kern("let a = arange(0, 4)" + "[:]" * N + ";"))
case("method_chain_100k", kern("let a = x.load()" + ".abs()" * N + ";"))
case("method_chain_10k", kern("let a = x.load()" + ".abs()" * 10000 + ";"))
case("type_ptr_100k", "kernel k(x: " + "*" * N + "f32) {}\n")
case("else_if_100k", kern("if n == 0 { }" + " else if n == 1 { }" * N))
case("stmts_1m", kern("let a = n;\n" + "a = a + 1;\n" * 1000000))
case("tuple_100k", kern("let t = (" + "1, " * N + "1);"))
case("args_100k", kern("let t = f(" + "1, " * N + "1);"))
case("params_10k", "kernel k(" + ", ".join("p%d: i32" % i for i in range(10000)) + ") {}\n")
case("params_dup_100k", "fn f(" + ", ".join("p%d" % i for i in range(100000)) + ") { return p0; }\nkernel k(x: *f32) { store(x, f(1)); }\n")
case("many_errors_1m", "@" * 1000000)
case("many_lex_errors_lines", "@\n" * 500000)
prog = []
i = 0
while sum(map(len, prog)) < 10 * 1024 * 1024:
    prog.append("kernel k%d(x: *f32, y: *f32, n: i32, const B: i32 = 128) warps(4) {\n"
                "    let o = program_id(0) * B + arange(0, B);\n    let m = o < n;\n"
                "    store(y + o, load(x + o, m, 0.0) * 2.0 + 1.0, m);\n}\n" % i)
    i += 1
case("valid_10mb", "".join(prog))
case("fns_10mb", "".join("fn f%d(a) { return a + %d; }\n" % (j, j) for j in range(300000)) +
     "kernel k(x: *i32) { store(x, f1(1)); }\n")
case("ident_1mb", kern("let " + "a" * (1 << 20) + " = 1;"))
case("ident_256", kern("let " + "a" * 256 + " = 1;"))
case("ident_long_undefined", kern("let b = " + "z" * (1 << 20) + ";"))
case("int_10k_digits", kern("let a = " + "9" * 10000 + ";"))
case("hex_10k_digits", kern("let a = 0x" + "f" * 10000 + ";"))
case("float_10k_digits", kern("let a = " + "1" * 10000 + ".5;"))
case("float_exp_huge", kern("let a = 1e" + "9" * 10000 + ";"))
case("float_frac_10k", kern("let a = 0." + "0" * 10000 + "1;"))
case("int_u64max", kern("let a = 18446744073709551615;"))
case("int_i64min", kern("let a = -9223372036854775808;"))
case("int_i64min_paren", kern("let a = -(9223372036854775807) - 1; let b = -a;"))
case("nul_in_string", kern('let s = "a\x00b";'))
case("nul_in_line_comment", kern("// a\x00b\nlet a = 1;"))
case("nul_in_block_comment", kern("/* a\x00b */ let a = 1;"))
case("nul_everywhere", "\x00" * 1000)
case("nul_in_import", 'import "std/prel\x00ude.tile";\n' + kern(""  ).decode())
case("nul_escape_import", 'import "std/prelude.tile\\0../../etc/passwd";\n' + kern("").decode())
case("unterminated_block_comment", kern("let a = 1;").decode() + "/*")
case("unterminated_block_comment_star", "/*" + "*" * 100000)
case("unterminated_string", 'kernel k() { let s = "abc')
case("only_slash_1", "/")
case("only_slash_1mb", "/" * (1 << 20))
case("only_slash_nl", "/\n" * 100000)
case("only_star_slash", "*/" * 100000)
chain = "".join("fn f%d(a) { return f%d(a) + 1; }\n" % (j, j + 1) for j in range(200)) + "fn f200(a) { return a; }\n"
case("call_chain_200", chain + kern("store(x, f0(1.0));").decode())
chain60 = "".join("fn f%d(a) { return f%d(a) + 1; }\n" % (j, j + 1) for j in range(60)) + "fn f60(a) { return a; }\n"
case("call_chain_60", chain60 + kern("store(x, f0(1.0));").decode())
case("self_recursion", "fn f(a) { return f(a); }\n" + kern("store(x, f(1.0));").decode())
case("mutual_recursion", "fn f(a) { return g(a); }\nfn g(a) { return f(a); }\n" + kern("store(x, f(1.0));").decode())
case("recursion_default_arg", "fn f(a, b = f(1)) { return a; }\n" + kern("store(x, f(1.0));").decode())
case("recursive_const", "const A = B;\nconst B = A;\n" + kern("store(x, A);").decode())
case("self_const", "const A = A + 1;\n" + kern("store(x, A);").decode())
case("kernel_default_self", "kernel k(x: *f32, const B: i32 = B) { store(x, 1.0); }\n")
# each level calls the next twice: 2^40 inlined calls
expo = "".join("fn e%d(a) { return e%d(e%d(a)); }\n" % (j, j + 1, j + 1) for j in range(40)) + "fn e40(a) { return a + 1; }\n"
case("exponential_inline", expo + kern("store(x, e0(1.0));").decode())
expo_rt = "".join("fn e%d(a) { return e%d(a) + e%d(a); }\n" % (j, j + 1, j + 1) for j in range(40)) + "fn e40(a) { return a; }\n"
case("exponential_inline_rt", expo_rt + kern("store(x, e0(load(x)));").decode())
case("static_range_100k", kern("let a = n;\nfor i in static_range(0, 100000) { a = a + i; }\nstore(x, a as f32);"))
case("static_range_4096_nested2", kern("let a = n;\nfor i in static_range(0, 4096) { for j in static_range(0, 4096) { a = a + 1; } }\nstore(x, a as f32);"))
case("static_range_4096_nested3", kern("let a = 0;\nfor i in static_range(4096) { for j in static_range(4096) { for k in static_range(4096) { a = 1; } } }"))
case("static_range_overflow_span", kern("for i in static_range(-9223372036854775807, 9223372036854775807) { }"))
case("static_range_overflow_step", kern("for i in static_range(9223372036854775806, 9223372036854775807, 2) { }"))
case("static_range_step_min", kern("for i in static_range(0, -1, -9223372036854775807 - 1) { }"))
case("range_step_min", kern("for i in range(0, n, -9223372036854775807 - 1) { }"))
case("tile_1048576", kern("let t = zeros([1048576], f32);\nstore(x + arange(0, 1048576), t);"))
case("tile_2097152", kern("let t = zeros([2097152], f32);\nstore(x + arange(0, 2097152), t);"))
case("tile_1048576_2d", kern("let t = zeros([1024, 1024], f32);\nlet u = dot(t, t);\nstore(x, sum(sum(u, 1), 0));"))
case("tile_shape_overflow", kern("let t = zeros([65536, 65536, 65536, 65536], f32);"))
case("tile_shape_i64", kern("let t = zeros([4294967296], f32);"))
case("tile_shape_neg", kern("let t = zeros([-1], f32);"))
case("tile_type_overflow", "fn f(a: f32[65536, 65536, 65536, 65536]) { return a; }\n" + kern("store(x, f(1.0));").decode())
case("arange_1_30", kern("let a = arange(0, 1 << 30);"))
case("arange_1_20", kern("let a = arange(0, 1 << 20);\nstore(x + a, a as f32);"))
case("arange_i64_span", kern("let a = arange(-9223372036854775807 - 1, 9223372036854775807);"))
case("arange_wrap", kern("let a = arange(9223372036854775807, -9223372036854775807 - 1);"))
case("blocked_overflow", "kernel k(x: *f32) warps(4) {\n  let l = blocked([1, 1, 1, 1], [1024, 1024, 1024, 1024], [1024, 1024, 1024, 1024], [0, 1, 2, 3]);\n}\n")
case("cluster_overflow", "kernel k(x: *f32) cluster(4294967296, 4294967296, 4294967296) { }\n")
case("cast_nan_int", kern("let a = nan as i32;"))
case("cast_huge_int", kern("let a = 1e30 as i64;"))
case("cast_inf_int", kern("let a = inf as u8;"))
case("shl_63", kern("let a = -1 << 63; let b = 1 << 63;"))
case("import_dev_zero", 'import "/dev/zero";\n' + kern("").decode())
case("import_dev_stdin", 'import "/dev/stdin";\n' + kern("").decode())
case("import_dir", 'import "/";\n' + kern("").decode())
case("import_self", 'import "import_self.tile";\n' + kern("").decode())
case("import_long", 'import "' + "a" * 1025 + '";\n' + kern("").decode())
case("import_4000", 'import "' + "a/" * 2000 + 'x";\n' + kern("").decode())
case("import_many", "".join('import "m%d.tile";\n' % j for j in range(20000)) + kern("").decode())
case("max_errors_many_notes", "".join("fn f(a) { return a; }\n" for _ in range(100000)) + kern("").decode())
big = "9" * 100000
case("define_huge_int", "kernel k(x: *f32, const B: i32 = 1) { store(x, B as f32); }\n", ["-D", "B=" + big])
case("define_huge_float", "kernel k(x: *f32, const B: f32 = 1.0) { store(x, B); }\n", ["-D", "B=1e" + big])
case("define_i64_max", "kernel k(x: *f32, const B: i32 = 1) { store(x, B as f32); }\n", ["-D", "B=9223372036854775807"])
case("define_i64_over", "kernel k(x: *f32, const B: i64 = 1) { let a = arange(0, B); }\n", ["-D", "B=9223372036854775808"])
case("define_arange_huge", "kernel k(x: *f32, const B: i64 = 1) { let a = arange(0, B); }\n", ["-D", "B=4611686018427387904"])
case("define_range_huge", "kernel k(x: *f32, const B: i64 = 1) { for i in static_range(B) { } }\n", ["-D", "B=-9223372036854775808"])
case("define_long_name", "kernel k(x: *f32) { }\n", ["-D", "a" * 100000 + "=1"])
case("define_long_value", "kernel k(x: *f32, const T: dtype = f32) { }\n", ["-D", "T=" + "f" * 100000])
case("define_nan", "kernel k(x: *f32, const B: i32 = 1) { let a = arange(0, B); }\n", ["-D", "B=nan"])
case("define_nan_f", "kernel k(x: *f32, const B: f32 = 1.0) { let a = B as i32; }\n", ["-D", "B=nan"])
case("define_many", "kernel k(x: *f32, const B: i32 = 1) { }\n", sum((["-D", "B=%d" % j] for j in range(256)), []))

case("lets_60k", "kernel k(n:i32){\n" + "".join("let v%d=n;\n" % j for j in range(60000)) + "}\n")
case("kernels_60k", "".join("kernel k%d(){}\n" % j for j in range(60000)))
case("consts_60k", "".join("const c%d=%d;\n" % (j, j) for j in range(60000)) + "kernel k(){}\n")
D = 80
case("inline_x_nested_calls", "fn f(a) {\n    return " + "abs(" * D + "f(a)" + ")" * D + ";\n}\n" + kern("store(x, f(load(x)));").decode())
case("inline_x_nested_loops", "fn f(a) {\n" + "for i in static_range(1) {" * 190 + " let b = f(a); " + "}" * 190 + "\nreturn a;\n}\n" + kern("store(x, f(load(x)));").decode())
case("inline_x_nested_range", "fn f(a) {\n" + "for i in range(2) {" * 190 + " let b = f(a); " + "}" * 190 + "\nreturn a;\n}\n" + kern("store(x, f(load(x)));").decode())
case("static_range_const_nested2", kern("let a = 0;\nfor i in static_range(4096) { for j in static_range(4096) { a = a + 1; } }\nstore(x, a as f32);"))
case("static_range_empty_nested3", kern("for i in static_range(4096) { for j in static_range(4096) { for l in static_range(4096) { } } }"))
case("import_dev_zero_noncanonical", 'import "/dev/../dev/zero";\n' + kern("").decode())
case("shape_product_overflow", kern("let t = zeros([65536, 65536, 65536, 65536], f32);\nstore(x, sum(sum(sum(sum(t, 3), 2), 1), 0));"))

fails = []
for name, data, extra in cases:
    if only and only not in name: continue
    path = os.path.join(OUT, name + ".tile")
    with open(path, "wb") as f: f.write(data)
    t0 = time.time()
    try:
        p = subprocess.run([TILEC, "--emit=tir"] + extra + [name + ".tile"], cwd=OUT, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=10)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, err = "TIMEOUT", (e.stderr or b"")
    dt = time.time() - t0
    bad = rc not in (0, 1) or dt > 5 or b"internal compiler error" in err
    first = next((l for l in err.decode("utf-8", "replace").splitlines() if "error" in l), "")[:150]
    status = "FAIL" if bad else "ok"
    print("%-30s %-5s rc=%-8s %6.2fs %8d B  %s" % (name, status, rc, dt, len(data), first), flush=True)
    if bad: fails.append(name)
print("\n%d cases, %d failed: %s" % (len(cases) if not only else sum(1 for c in cases if only in c[0]), len(fails), " ".join(fails)))
sys.exit(1 if fails else 0)
