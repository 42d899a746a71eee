"""memlab.transpose of a jax.Array through JAX's FFI (memlab/_jax.py, src/c_api/jax_ffi.cpp).

Without jax: the error where libmemlab has no handler (one line: what to install). With jax on the CPU: the
handler's registration, the refusal of host arrays, and the plumbing JAX traces (result shapes under eval_shape
and vmap, the custom call in the lowered program). With jax on a GPU: jax.jit(memlab.transpose)(x) == x.T.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # beside torch's tests: no 75% grab of the GPU

import memlab
from memlab import _jax, _lib


class NoHandlerLibrary:
    """A libmemlab built without jaxlib's headers: no memlab_jax_transpose."""

    def __getattr__(self, name):
        raise AttributeError(name)


def test_without_the_handler_the_error_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(_lib, "_lib", NoHandlerLibrary())
    monkeypatch.setattr(_lib, "_lib_path", tmp_path / "libmemlab.so")
    monkeypatch.setattr(_jax, "_registered", False)
    with pytest.raises(memlab.NotBuiltError) as e:
        _jax.register()
    message = str(e.value)
    assert "\n" not in message
    assert "pip install jax" in message and "memlab_c_api" in message and str(tmp_path) in message
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, memlab.Error)


def test_the_build_has_the_handler_where_cmake_found_the_headers(lib_available):
    # ctest passes what CMake decided (MEMLAB_C_API_JAX_FFI); elsewhere there is nothing to hold it against.
    expected = os.environ.get("MEMLAB_EXPECT_JAX_FFI")
    if expected is None:
        pytest.skip("not run by ctest: MEMLAB_EXPECT_JAX_FFI (whether CMake found jaxlib's headers) is not set")
    has = hasattr(_lib.library(), _jax.HANDLER)
    assert has == (expected.upper() in ("ON", "1", "TRUE")), f"CMake said {expected}, libmemlab has the handler: {has}"


try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = jnp = None
needs_jax = pytest.mark.skipif(jax is None, reason="jax is not installed (pip install jax: these tests need it)")


def _handler_or_skip():
    try:
        _jax.handler()
    except memlab.NotBuiltError as e:
        pytest.skip(f"libmemlab has no JAX handler: {e}")
    except memlab.LibraryNotFoundError as e:
        pytest.skip(f"libmemlab not built: {e}")


@needs_jax
def test_registration_is_once_and_host_arrays_are_refused():
    _handler_or_skip()
    _jax.register()
    assert _jax._registered
    _jax.register()  # a second call does nothing
    x = jax.device_put(jnp.arange(12, dtype=jnp.float32).reshape(3, 4), jax.devices("cpu")[0])
    with pytest.raises(memlab.InvalidArgumentError, match="GPU memory: x is a jax.Array on cpu"):
        memlab.transpose(x)


@needs_jax
def test_arguments_are_checked_before_jax_is_asked(monkeypatch):
    monkeypatch.setattr(_jax, "_has_gpu", lambda _: True)
    x = jax.ShapeDtypeStruct((4, 6), jnp.float32)
    with pytest.raises(memlab.InvalidArgumentError, match="out=: a jax.Array is immutable"):
        jax.eval_shape(lambda a: memlab.transpose(a, out=a), x)
    with pytest.raises(memlab.InvalidArgumentError, match="stream=: a jax.Array is transposed on XLA's stream"):
        jax.eval_shape(lambda a: memlab.transpose(a, stream=7), x)
    with pytest.raises(memlab.InvalidArgumentError, match="memlab.transpose takes a matrix"):
        jax.eval_shape(memlab.transpose, jax.ShapeDtypeStruct((2, 3, 4, 5), jnp.float32))
    with pytest.raises(memlab.InvalidArgumentError, match="unsupported element size: x has 16-byte"):
        jax.eval_shape(memlab.transpose, jax.ShapeDtypeStruct((4, 4), jnp.complex64).update(dtype=jnp.dtype("V16")))


@needs_jax
def test_traced_shapes_under_jit_and_vmap(monkeypatch):
    _handler_or_skip()
    monkeypatch.setattr(_jax, "_has_gpu", lambda _: True)  # shapes only: nothing runs
    assert jax.eval_shape(memlab.transpose, jax.ShapeDtypeStruct((3, 5), jnp.float16)).shape == (5, 3)
    batch = jax.eval_shape(memlab.transpose, jax.ShapeDtypeStruct((7, 3, 5), jnp.bfloat16))
    assert batch.shape == (7, 5, 3) and batch.dtype == jnp.bfloat16
    mapped = jax.eval_shape(jax.vmap(memlab.transpose), jax.ShapeDtypeStruct((7, 3, 5), jnp.int8))
    assert mapped.shape == (7, 5, 3)
    text = jax.jit(memlab.transpose).lower(jax.ShapeDtypeStruct((3, 5), jnp.float32)).as_text()
    assert "custom_call @memlab_transpose" in text and "tensor<5x3xf32>" in text


@needs_jax
def test_without_a_gpu_backend_a_traced_call_is_refused():
    if _jax._has_gpu(jax):
        pytest.skip("JAX has a GPU here")
    with pytest.raises(memlab.InvalidArgumentError, match="JAX has no GPU backend"):
        jax.jit(lambda a: memlab.transpose(a)).lower(jax.ShapeDtypeStruct((3, 5), jnp.float32))


# ---- on the GPU ---------------------------------------------------------------------------------------------------

def _gpu_or_skip():
    if not _jax._has_gpu(jax):
        pytest.skip("JAX has no GPU backend here (jax[cuda13] on a GPU machine runs these)")
    _handler_or_skip()


def _random(key, shape, dtype):
    if jnp.issubdtype(dtype, jnp.integer):
        low = 0 if jnp.issubdtype(dtype, jnp.unsignedinteger) else -100
        return jax.random.randint(key, shape, low, 100, dtype=dtype)
    return jax.random.normal(key, shape, dtype=jnp.float32).astype(dtype)


@needs_jax
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "int16", "uint8"])
def test_jit_of_transpose_matches_x_T(dtype):
    _gpu_or_skip()
    f = jax.jit(memlab.transpose)
    for i, shape in enumerate([(1, 1), (3, 5), (33, 4097), (257, 129), (1537, 301), (4096, 4096)]):
        x = _random(jax.random.PRNGKey(i), shape, jnp.dtype(dtype))
        y = f(x)
        assert isinstance(y, jax.Array) and y.shape == shape[::-1] and y.dtype == x.dtype
        assert bool((y == x.T).all()), f"{shape} {dtype}"
        assert bool((memlab.transpose(x) == x.T).all())  # eagerly too


@needs_jax
@pytest.mark.gpu
def test_batches_vmap_and_composition_under_jit():
    _gpu_or_skip()
    x = _random(jax.random.PRNGKey(7), (6, 33, 65), jnp.float32)
    want = jnp.swapaxes(x, 1, 2)
    assert bool((jax.jit(memlab.transpose)(x) == want).all())
    assert bool((jax.jit(jax.vmap(memlab.transpose))(x) == want).all())
    g = jax.jit(lambda a: memlab.transpose(a * 2) + 1)  # fused with XLA's own ops around it
    assert bool((g(x[0]) == (x[0] * 2).T + 1).all())
