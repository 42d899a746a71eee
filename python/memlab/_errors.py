"""memlab's exceptions. Every one is a memlab.Error; those about the arguments are also ValueErrors, those
about the GPU or the library also RuntimeErrors, so `except ValueError` in existing code still works."""

from __future__ import annotations


class Error(Exception):
    """Base of every error memlab raises."""


class InvalidArgumentError(Error, ValueError):
    """The arguments cannot be moved as asked: not GPU memory, another device, mismatched sizes, an
    unsupported element size, non-contiguous or overlapping buffers."""


class DeviceMismatchError(InvalidArgumentError):
    """The arrays live on different devices."""


class CudaError(Error, RuntimeError):
    """CUDA reported an error; `status` is the cudaError_t value and `name` its name."""

    def __init__(self, message: str, status: int = 0, name: str = ""):
        super().__init__(message)
        self.status = status
        self.name = name


class NoDeviceError(CudaError):
    """No usable GPU: no device, no driver, or a driver too old for libmemlab's CUDA runtime."""


class LibraryNotFoundError(Error, RuntimeError):
    """libmemlab (the C ABI this package calls) was not found or could not be loaded."""


class NotBuiltError(Error, RuntimeError):
    """The libmemlab in use was built without a part the call needs (JAX's FFI handler: jaxlib's headers were
    not found when it was built); the message says what to install."""


# cudaError_t values that mean there is no GPU to run on.
_NO_DEVICE = {
    3: "cudaErrorInitializationError",
    34: "cudaErrorStubLibrary",
    35: "cudaErrorInsufficientDriver",
    100: "cudaErrorNoDevice",
}


def error_from_status(status: int, name: str, message: str) -> Error:
    if status == 1:  # cudaErrorInvalidValue: memlab's own argument checks
        return InvalidArgumentError(message)
    if status in _NO_DEVICE:
        return NoDeviceError(f"no usable GPU: {message}", status, name)
    return CudaError(message, status, name)
