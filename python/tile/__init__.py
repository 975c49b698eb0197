"""Tile from Python: Jagged Flash Attention as PyTorch custom ops, and any
Tile kernel JIT-compiled and launched on torch tensors. Pure Python over the
C libraries (libtilert, libjfa, libtilejit) through ctypes; docs/python.md.

    import tile
    out = tile.jfa_varlen_func(q, k, v, cu, cu, max_len, max_len, causal=True)

    add = tile.Kernel("examples/vector_add/vector_add.tile", "vector_add")
    add[(n + 1023) // 1024](x, y, out, n)

    add = tile.autotune("examples/vector_add/vector_add.tile", "vector_add",
                        configs=[{"BLOCK": 256}, {"BLOCK": 1024}], key=["n"])
    add[lambda meta: ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)](x, y, out, n)

PyTorch is needed for the attention functions and for tensors as kernel
arguments; the rest (tile.Kernel with DeviceBuffer arguments, tile.runtime)
works without it.
"""
from ._lib import (DeviceBuffer, LibraryNotFound, TileCompileError, TileError, TileInvalidArgument, cubin_dir,
                   device_arch, device_info, init, interpreting, lib_dir)
from .kernel import JitOptions, Kernel, KernelInfo, KernelParam, TmaDesc, compile_cubin, cubin_kernels
from .autotune import Autotuner, autotune
from .jfa import clear_plans, jfa_broadcast_q, jfa_varlen_func

__version__ = "0.1.0"
__all__ = ["jfa_varlen_func", "jfa_broadcast_q", "clear_plans", "Kernel", "KernelInfo", "KernelParam", "JitOptions",
           "Autotuner", "autotune",
           "TmaDesc", "compile_cubin", "cubin_kernels", "DeviceBuffer", "TileError", "TileInvalidArgument",
           "TileCompileError", "LibraryNotFound", "lib_dir", "cubin_dir", "init", "device_info", "device_arch",
           "interpreting"]
