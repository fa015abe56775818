"""Texture objects and texture sampling, as CUDA documents it (CUDA C++ Programming
Guide, "Texture Fetching"; PTX ISA, `tex`).

A `Texture` describes where the texels lie in device memory (a CUDA array, a
pitched 2D allocation or linear memory), their channel format and how they are
read (filter, address modes, normalized coordinates, read mode). The runtime
registers live texture objects in `DeviceMemory.textures` (handle -> Texture);
the `tex` instruction (semantics/texture.py) samples them with `sample`:

* coordinates: integer coordinates (`tex1Dfetch`, PTX `.s32`) are texel indices,
  never filtered; float coordinates are scaled by the size when the texture uses
  normalized coordinates (all arithmetic in float32, as the hardware);
* point filtering reads texel floor(x); linear filtering reads the two (1D) or
  four (2D) texels around x - 0.5 and blends them with weights held, as the
  guide states, in 9-bit fixed point with 8 fractional bits (rounded to the
  nearest 1/256 here);
* address modes act on texel indices: clamp clips to the edge, border reads the
  texture's border colour, wrap takes the index modulo the size, mirror
  reflects it. CUDA supports wrap and mirror only with normalized coordinates;
  with unnormalized ones (tex1Dfetch always) they act as clamp; an integer fetch
  (tex1Dfetch) outside the texture reads 0 in every mode, as a real H200 does;
* read mode: 8- and 16-bit integer channels read with
  cudaReadModeNormalizedFloat become v / (2^n - 1) (unsigned) or
  max(v / (2^(n-1) - 1), -1) (signed); element-type reads return the integer;
* channels a format lacks read as 0 (tlpsim's choice; CUDA does not document it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tlpsim.functional.memory import GLOBAL_BASE

WRAP, CLAMP, MIRROR, BORDER = range(4)
POINT, LINEAR = range(2)
SIGNED, UNSIGNED, FLOAT = range(3)
ADDRESS_MODES = ("wrap", "clamp", "mirror", "border")

_DTYPES = {(SIGNED, 8): np.int8, (SIGNED, 16): np.int16, (SIGNED, 32): np.int32,
           (UNSIGNED, 8): np.uint8, (UNSIGNED, 16): np.uint16, (UNSIGNED, 32): np.uint32,
           (FLOAT, 16): np.float16, (FLOAT, 32): np.float32}


class TextureError(ValueError):
    """A texture description CUDA would refuse (cudaErrorInvalidValue / InvalidChannelDescriptor)."""


@dataclass(frozen=True)
class ChannelFormat:
    """cudaChannelFormatDesc: bits of x, y, z, w and the kind (signed, unsigned, float)."""

    bits: tuple[int, int, int, int]
    kind: int

    def __post_init__(self) -> None:
        used = [b for b in self.bits if b]
        if not used or any(b != used[0] for b in used) or (self.kind, used[0]) not in _DTYPES \
                or self.bits[: len(used)] != tuple(used) or len(used) == 3:
            raise TextureError(f"channel format {self.bits} of kind {self.kind} is not one CUDA supports "
                               "(1, 2 or 4 channels of equal size: 8/16/32-bit signed or unsigned, 16/32-bit float)")

    @property
    def channels(self) -> int:
        return sum(1 for b in self.bits if b)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(_DTYPES[(self.kind, self.bits[0])])

    @property
    def texel_bytes(self) -> int:
        return self.channels * self.bits[0] // 8


@dataclass
class Texture:
    """One texture object: its texels and how `tex` reads them."""

    address: int                  # device address of texel (0, 0)
    fmt: ChannelFormat
    width: int
    height: int = 1               # 1 for linear memory and 1D arrays
    pitch: int = 0                # bytes between rows (0: width * texel bytes)
    address_mode: tuple[int, int] = (CLAMP, CLAMP)
    filter_mode: int = POINT
    normalized_float: bool = False    # cudaReadModeNormalizedFloat
    normalized_coords: bool = False
    border: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    what: str = "linear memory"   # for messages: "CUDA array 0x...", "pitched memory", ...
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.pitch == 0:
            self.pitch = self.width * self.fmt.texel_bytes
        if self.width < 1 or self.height < 1:
            raise TextureError(f"a texture of {self.width} x {self.height} texels is empty")
        if self.pitch < self.width * self.fmt.texel_bytes:
            raise TextureError(f"pitch {self.pitch} is less than a row of {self.width} texels "
                               f"({self.width * self.fmt.texel_bytes} bytes)")
        if self.filter_mode == LINEAR and not self.float_results:
            raise TextureError("linear filtering needs float results: a float channel format, or 8/16-bit "
                               "integer channels read with cudaReadModeNormalizedFloat")
        if self.normalized_float and self.fmt.kind != FLOAT and self.fmt.bits[0] == 32:
            raise TextureError("cudaReadModeNormalizedFloat applies to 8- and 16-bit integer channels only")
        if self.address % (self.fmt.bits[0] // 8) or self.pitch % (self.fmt.bits[0] // 8):
            raise TextureError(f"texel address {self.address:#x} / pitch {self.pitch} is not aligned to its channels")

    @property
    def float_results(self) -> bool:
        return self.fmt.kind == FLOAT or self.normalized_float

    @property
    def nbytes(self) -> int:
        """Bytes from the first texel to the end of the last."""
        return (self.height - 1) * self.pitch + self.width * self.fmt.texel_bytes


# ------------------------------------------------------------------ sampling


def _address(i: np.ndarray, n: int, mode: int, normalized: bool) -> tuple[np.ndarray, np.ndarray]:
    """Texel indices after the address mode, and which lanes read the border."""
    if not normalized and mode in (WRAP, MIRROR):
        mode = CLAMP
    if mode == WRAP:
        return np.mod(i, n), np.zeros(i.shape, dtype=bool)
    if mode == MIRROR:
        m = np.mod(i, 2 * n)
        return np.where(m >= n, 2 * n - 1 - m, m), np.zeros(i.shape, dtype=bool)
    if mode == BORDER:
        out = (i < 0) | (i >= n)
        return np.clip(i, 0, n - 1), out
    return np.clip(i, 0, n - 1), np.zeros(i.shape, dtype=bool)


def _texels(tex: Texture, data: np.ndarray, i: np.ndarray, j: np.ndarray, border: np.ndarray,
            results: str) -> np.ndarray:
    """(lanes, 4) texel values for indices (i, j), converted for the result type."""
    fmt = tex.fmt
    cb = fmt.bits[0] // 8
    off = tex.address - GLOBAL_BASE
    typed = data[off: off + tex.nbytes].view(fmt.dtype)
    pos = j * (tex.pitch // cb) + i * fmt.channels
    out = np.zeros((i.size, 4), dtype=np.float32 if results == "f32" else np.int64)
    for c in range(fmt.channels):
        v = typed[pos + c]
        if results == "f32":
            if fmt.kind == FLOAT:
                v = v.astype(np.float32)
            elif tex.normalized_float:
                bits = fmt.bits[0]
                if fmt.kind == UNSIGNED:
                    v = (v.astype(np.float32) / np.float32(2 ** bits - 1)).astype(np.float32)
                else:
                    v = np.maximum(v.astype(np.float32) / np.float32(2 ** (bits - 1) - 1), np.float32(-1.0))
            else:  # integer texels read into a float destination: the bits, as the hardware returns them
                v = v.astype(np.int64).astype(np.uint32 if fmt.kind == UNSIGNED else np.int32).view(np.float32)
        out[:, c] = v
    if border.any():
        fill = np.asarray(tex.border, dtype=np.float32)
        out[border] = fill if results == "f32" else fill.astype(np.int64)
    return out


def _weights(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lower texel index and the 8-bit fractional weight of linear filtering at x."""
    xb = (x - np.float32(0.5)).astype(np.float32)
    lo = np.floor(xb)
    frac = (xb - lo).astype(np.float32)
    alpha = (np.round(frac * np.float32(256.0)) / np.float32(256.0)).astype(np.float32)
    return lo.astype(np.int64), alpha


def sample(tex: Texture, data: np.ndarray, coords: list[np.ndarray], integer: bool,
           results: str) -> tuple[np.ndarray, np.ndarray]:
    """Sample `tex` (texels in `data`, the device memory buffer) at per-lane `coords`
    (1 or 2 arrays). Returns ((lanes, 4) values: float32 for "f32" results, int64
    otherwise) and the device address of each lane's first texel (for the tracer)."""
    dims = len(coords)
    sizes = (tex.width, tex.height)[:dims]
    if dims == 1 and tex.height != 1:
        raise TextureError(f"a 1D fetch from a 2D texture ({tex.width} x {tex.height})")
    if integer:
        idx = [c.astype(np.int64) for c in coords]
        filt = POINT
    else:
        xs = []
        for c, n in zip(coords, sizes):
            c = c.astype(np.float32)
            xs.append((c * np.float32(n)).astype(np.float32) if tex.normalized_coords else c)
        filt = tex.filter_mode
        if filt == POINT:
            idx = [np.floor(x).astype(np.int64) for x in xs]
    if filt == POINT:
        mapped = [_address(k, n, m, tex.normalized_coords and not integer)
                  for k, n, m in zip(idx, sizes, tex.address_mode)]
        i, bi = mapped[0]
        j, bj = mapped[1] if dims == 2 else (np.zeros_like(i), np.zeros(i.shape, dtype=bool))
        vals = _texels(tex, data, i, j, bi | bj, results)
        if integer:
            # an integer fetch outside the texture reads 0 whatever the address mode or
            # border colour (measured on an H200: tex1Dfetch with clamp and border modes)
            outside = np.zeros(i.shape, dtype=bool)
            for k, n in zip(idx, sizes):
                outside |= (k < 0) | (k >= n)
            vals[outside] = 0
        return vals, _texel_address(tex, i, j)
    lows = [_weights(x) for x in xs]
    ii = [(_address(lo, n, m, tex.normalized_coords), _address(lo + 1, n, m, tex.normalized_coords))
          for (lo, _), n, m in zip(lows, sizes, tex.address_mode)]
    (i0, b0), (i1, b1) = ii[0]
    a = lows[0][1][:, None]
    one = np.float32(1.0)
    if dims == 1:
        zero = np.zeros_like(i0)
        t0 = _texels(tex, data, i0, zero, b0, results)
        t1 = _texels(tex, data, i1, zero, b1, results)
        vals = ((one - a) * t0 + a * t1).astype(np.float32)
        return vals, _texel_address(tex, i0, zero)
    (j0, c0), (j1, c1) = ii[1]
    b = lows[1][1][:, None]
    t00 = _texels(tex, data, i0, j0, b0 | c0, results)
    t10 = _texels(tex, data, i1, j0, b1 | c0, results)
    t01 = _texels(tex, data, i0, j1, b0 | c1, results)
    t11 = _texels(tex, data, i1, j1, b1 | c1, results)
    vals = ((one - a) * (one - b) * t00 + a * (one - b) * t10 + (one - a) * b * t01 + a * b * t11).astype(np.float32)
    return vals, _texel_address(tex, i0, j0)


def _texel_address(tex: Texture, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    return (np.uint64(tex.address) + (j * tex.pitch + i * tex.fmt.texel_bytes).astype(np.uint64)).astype(np.uint64)
