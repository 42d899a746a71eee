"""The Triton peers: what a user would write in Triton for a copy and a transpose.
Offsets are 64-bit: a copy of 2^31 elements overflows 32-bit program offsets."""

import triton
import triton.language as tl


@triton.jit
def copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.jit
def transpose(x, y, rows, cols, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)
    rn = tl.program_id(1).to(tl.int64) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < rows) & (rn[None, :] < cols)
    tile = tl.load(x + rm[:, None] * cols + rn[None, :], mask=mask)
    tl.store(y + rn[:, None] * rows + rm[None, :], tl.trans(tile), mask=tl.trans(mask))
