"""memlab's Python package without a GPU: import, the exceptions, argument checks on fake arrays (every
check memlab makes before calling CUDA), the C ABI's messages and path choice, and the no-GPU error."""

from __future__ import annotations

import ctypes
import os

import pytest

import memlab
from memlab import _lib


def test_import_and_version():
    assert memlab.__version__ == "0.1.0"
    for name in ("copy_", "transpose", "transpose_path", "Error", "NoDeviceError"):
        assert hasattr(memlab, name)


def test_exception_hierarchy():
    assert issubclass(memlab.InvalidArgumentError, memlab.Error)
    assert issubclass(memlab.InvalidArgumentError, ValueError)
    assert issubclass(memlab.DeviceMismatchError, memlab.InvalidArgumentError)
    assert issubclass(memlab.CudaError, RuntimeError)
    assert issubclass(memlab.NoDeviceError, memlab.CudaError)
    assert issubclass(memlab.LibraryNotFoundError, memlab.Error)


# ---- arguments, checked before any CUDA call -----------------------------------------------------------


def test_transpose_needs_2d_or_3d(fake):
    for shape in [(5,), (2, 3, 4, 5)]:
        with pytest.raises(memlab.InvalidArgumentError, match="dimensions"):
            memlab.transpose(fake(shape), out=fake((1, 1)))


def test_unsupported_element_size(fake):
    with pytest.raises(memlab.InvalidArgumentError, match="unsupported element size: x has 16-byte"):
        memlab.transpose(fake((4, 4), typestr="<c16"))
    with pytest.raises(memlab.InvalidArgumentError, match="unsupported element size: x has 3-byte"):
        memlab.transpose(fake((4, 4), typestr="|V3"))


def test_non_contiguous_input_and_output(fake):
    transposed_view = fake((4, 6), strides=(4, 16))  # a .t() of a 6 x 4 f32 matrix
    with pytest.raises(memlab.InvalidArgumentError, match="x is not contiguous"):
        memlab.transpose(transposed_view, out=fake((6, 4), ptr=1 << 41))
    with pytest.raises(memlab.InvalidArgumentError, match="out is not contiguous"):
        memlab.transpose(fake((4, 6)), out=fake((6, 4), ptr=1 << 41, strides=(4, 24)))
    with pytest.raises(memlab.InvalidArgumentError, match="src is not contiguous"):
        memlab.copy_(fake((6, 4), ptr=1 << 41), transposed_view)
    # Explicit C-contiguous strides, and strides of extent-1 dimensions, are contiguous.
    v = memlab._arrays.view(fake((4, 6), strides=(24, 4)), "x")
    assert v.contiguous()
    assert memlab._arrays.view(fake((1, 6), strides=(999, 4)), "x").contiguous()


def test_mismatched_sizes(fake):
    with pytest.raises(memlab.InvalidArgumentError, match="mismatched sizes: out has shape"):
        memlab.transpose(fake((4, 6)), out=fake((4, 6), ptr=1 << 41))
    with pytest.raises(memlab.InvalidArgumentError, match="mismatched sizes: out has 2-byte elements"):
        memlab.transpose(fake((4, 6)), out=fake((6, 4), typestr="<f2", ptr=1 << 41))
    with pytest.raises(memlab.InvalidArgumentError, match="mismatched sizes: out has shape"):
        memlab.transpose(fake((2, 4, 6)), out=fake((6, 4), ptr=1 << 41))
    with pytest.raises(memlab.InvalidArgumentError, match="mismatched sizes: dst holds 96 bytes"):
        memlab.copy_(fake((4, 6)), fake((4, 7), ptr=1 << 41))


def test_overlapping_buffers(fake):
    with pytest.raises(memlab.InvalidArgumentError, match="overlap"):
        memlab.transpose(fake((4, 6), ptr=1 << 40), out=fake((6, 4), ptr=(1 << 40) + 8))
    with pytest.raises(memlab.InvalidArgumentError, match="overlap"):
        memlab.copy_(fake((100,), ptr=(1 << 40) + 396), fake((100,), ptr=1 << 40))


def test_another_device(fake):
    with pytest.raises(memlab.DeviceMismatchError, match="out is on cuda:1 and x on cuda:0"):
        memlab.transpose(fake((4, 6), device=(2, 0)), out=fake((6, 4), ptr=1 << 41, device=(2, 1)))
    with pytest.raises(memlab.DeviceMismatchError, match="cuda:0"):
        memlab.copy_(fake((4, 6), device=(2, 0)), fake((4, 6), ptr=1 << 41, device=(2, 3)))


def test_not_gpu_memory(fake):
    with pytest.raises(memlab.InvalidArgumentError, match="GPU memory: x is on cpu"):
        memlab.transpose(fake((4, 6), device=(1, 0)))
    with pytest.raises(memlab.InvalidArgumentError, match="neither __cuda_array_interface__ nor __dlpack__"):
        memlab.transpose([[1, 2], [3, 4]])


def test_numpy_arrays_are_refused_as_host_memory():
    np = pytest.importorskip("numpy")
    x = np.zeros((4, 6), dtype=np.float32)
    if not hasattr(x, "__dlpack__"):
        pytest.skip("numpy without DLPack")
    with pytest.raises(memlab.InvalidArgumentError, match="GPU memory: x is on cpu"):
        memlab.transpose(x)


def test_out_needed_for_a_framework_memlab_cannot_allocate_in(fake):
    with pytest.raises(memlab.InvalidArgumentError, match="pass out="):
        memlab.transpose(fake((4, 6)))


def test_empty_arrays_need_no_gpu(fake):
    out = fake((5, 0), ptr=0)
    assert memlab.transpose(fake((0, 5), ptr=0), out=out) is out
    dst = fake((0,), ptr=0)
    assert memlab.copy_(dst, fake((0,), ptr=0)) is dst


def test_stream_arguments():
    class TorchLikeStream:
        cuda_stream = 1234

    class CupyLikeStream:
        ptr = 5678

    assert memlab._arrays.stream_handle(None) is None
    assert memlab._arrays.stream_handle(7) == 7
    assert memlab._arrays.stream_handle(TorchLikeStream()) == 1234
    assert memlab._arrays.stream_handle(CupyLikeStream()) == 5678
    with pytest.raises(memlab.InvalidArgumentError, match="stream"):
        memlab._arrays.stream_handle("default")


def test_cai_stream_is_used(fake):
    assert memlab._arrays.view(fake((2, 2), stream=None), "x").stream == 1  # legacy default
    assert memlab._arrays.view(fake((2, 2), stream=99), "x").stream == 99


# ---- the library -----------------------------------------------------------------------------------------


def test_library_is_found_and_speaks_this_abi(lib_available):
    assert memlab.library_path().name.startswith(("libmemlab", "memlab"))
    assert _lib.library().memlab_abi_version() == _lib.ABI_VERSION
    assert memlab.library_version() == "0.1.0"


def test_transpose_path_needs_no_gpu(lib_available):
    base = 1 << 40
    assert memlab.transpose_path(base, 2 * base, 1, 16384, 16384, 4) == "aligned"
    assert memlab.transpose_path(base, 2 * base, 1, 12289, 3001, 4) == "realign_both"
    assert memlab.transpose_path(base, 2 * base, 1, 8193, 4099, 8) == "elem8"
    assert memlab.transpose_path(base, 2 * base, 1, 4096, 4095, 4) == "realign_in"
    assert memlab.transpose_path(base + 4, 2 * base, 1, 4096, 4096, 4) == "realign_out"
    assert memlab.transpose_path(base, 2 * base, 1, 40000003, 3, 4) == "few_cols"
    assert memlab.transpose_path(base, 2 * base, 1, 3, 40000003, 8) == "few_rows"
    assert memlab.transpose_path(base, 2 * base, 1000000, 3, 3, 4) == "small_matrices"
    assert memlab.transpose_path(base, 2 * base, 7, 1, 33, 2) == "copy"
    assert memlab.transpose_path(base, 2 * base, 1, 0, 33, 2) == "none"
    assert memlab.transpose_path(base, 2 * base, 1, 4, 4, 3) == "unsupported"


def test_c_abi_messages_name_the_arguments(lib_available):
    lib = _lib.library()
    base = 1 << 40
    assert lib.memlab_transpose(base, base + 4096, 1, 4, 4, 3, None) == 1  # cudaErrorInvalidValue
    message = lib.memlab_last_error_message().decode()
    assert "elem_size=3" in message and "1, 2, 4 or 8 bytes" in message and "cudaErrorInvalidValue" in message
    assert lib.memlab_get_last_error() == 1
    assert lib.memlab_get_last_error() == 0  # read once, then cleared
    assert lib.memlab_transpose(base, base + 8, 1, 4, 4, 4, None) == 1
    assert "overlap" in lib.memlab_last_error_message().decode()
    assert lib.memlab_copy_bytes(base, base + 8, 16, None) == 1
    assert "overlap" in lib.memlab_last_error_message().decode()
    with pytest.raises(memlab.InvalidArgumentError, match="1, 2, 4 or 8 bytes"):
        _lib.check(lib.memlab_transpose(base, base + 4096, 1, 4, 4, 16, None))
    assert lib.memlab_error_name(100).decode() == "cudaErrorNoDevice"


def test_no_gpu_is_an_exception_with_a_message(fake, lib_available):
    if memlab.device_count() > 0:
        pytest.skip("a GPU is present: the no-GPU error cannot happen here")
    with pytest.raises(memlab.NoDeviceError, match="no usable GPU") as e:
        memlab.transpose(fake((4, 6), device=(2, 0)), out=fake((6, 4), ptr=1 << 41, device=(2, 0)))
    assert e.value.status in (3, 34, 35, 100)
    with pytest.raises(memlab.NoDeviceError, match="no usable GPU"):
        memlab.copy_(fake((4, 6)), fake((4, 6), ptr=1 << 41))  # device from the pointer: CUDA is asked


def test_library_not_found_names_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setattr(_lib, "_lib", None)
    monkeypatch.setattr(_lib, "_candidates", lambda: [tmp_path / "libmemlab.so"])
    with pytest.raises(memlab.LibraryNotFoundError, match="MEMLAB_LIBRARY") as e:
        _lib.library()
    assert str(tmp_path) in str(e.value)


def test_a_library_of_another_abi_is_not_used(monkeypatch, lib_available):
    real, path = _lib.library(), memlab.library_path()

    class Other:
        def __init__(self, *_):
            pass

        def __getattr__(self, name):
            f = getattr(real, name)
            return (lambda: 99) if name == "memlab_abi_version" else f

    monkeypatch.setattr(_lib, "_lib", None)
    monkeypatch.setattr(_lib.ctypes, "CDLL", Other)
    monkeypatch.setattr(_lib, "_declare", lambda lib: None)
    monkeypatch.setattr(_lib, "_candidates", lambda: [path])
    with pytest.raises(memlab.LibraryNotFoundError, match="C ABI version 99"):
        _lib.library()


def test_ctypes_signatures_pass_64_bit_sizes(lib_available):
    # A size above 2^32 must reach C intact: the path depends on it (rows x 4 bytes modulo 16).
    base = 1 << 40
    assert memlab.transpose_path(base, 2 * base, 1, (1 << 33) + 1, 100, 4) == "realign_out"
    assert memlab.transpose_path(base, 2 * base, 1, (1 << 33) + 4, 100, 4) == "aligned"
    assert isinstance(_lib.library().memlab_transpose.argtypes[2], type(ctypes.c_size_t))


def test_libmemlab_exports_only_its_c_abi(lib_available):
    """libmemlab's dynamic symbols are memlab_* alone (src/c_api/libmemlab.map): no C++ library function or
    GNU_UNIQUE object (a template's static, which binds process-wide even from a library loaded RTLD_LOCAL) and
    nothing of the CUDA runtime it carries. Loaded before PyTorch, such an export is what torch bound to."""
    import shutil
    import subprocess

    readelf = shutil.which("readelf")
    if readelf is None:
        if os.environ.get("CI"):
            pytest.fail("readelf (binutils) is missing")
        pytest.skip("readelf (binutils) is not installed")
    out = subprocess.run([readelf, "--dyn-syms", "-W", str(memlab.library_path())], capture_output=True, text=True,
                         check=True).stdout
    defined = []
    for line in out.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name; an undefined symbol (Ndx UND) is one libmemlab uses, not exports.
        if len(f) >= 8 and f[0][:-1].isdigit() and f[6] != "UND" and f[3] != "SECTION" and f[7]:
            defined.append((f[4], f[7]))
    assert defined, out
    others = [f"{name} ({bind})" for bind, name in defined if not name.startswith("memlab_")]
    assert others == [], "libmemlab exports more than its C ABI: " + ", ".join(others[:20])
    assert not any(bind == "UNIQUE" for bind, _ in defined)
