"""libmemlab in a process beside the frameworks, in either order: each case a fresh Python process that loads
libmemlab (memlab.library_path()) and imports a framework, in the order the case names, then makes a call of each.
With a GPU the call is a real memlab.transpose of that framework's array, compared with the framework's own
transpose; without one, the calls that need none (the framework computes on the CPU, memlab asks the C ABI for a
path and the device count).

A framework that is not installed is skipped with that reason (CI installs none of them; the GPU machine has all
three). What libmemlab exports, the cause of the crash that loading it before torch once was, is held on every
machine by test_libmemlab_exports_only_its_c_abi.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])

# Each framework: how a fresh process checks that it still works (CPU only), and a memlab call on its GPU array.
CPU_CHECK = {
    "torch": "import torch\nassert float(torch.arange(6.0).reshape(2, 3).t().sum()) == 15.0",
    "cupy": "import cupy",  # CuPy computes only on a GPU: its import is the check
    "jax": "import jax, jax.numpy as jnp\nassert float(jnp.arange(6.0).reshape(2, 3).T.sum()) == 15.0",
    None: "",
}
GPU_CALL = {
    "torch": """
        import torch
        if torch.cuda.is_available():
            x = torch.randn(301, 77, device="cuda")
            y = memlab.transpose(x)
            torch.cuda.synchronize()
            assert torch.equal(y, x.t().contiguous()), "memlab.transpose of a torch tensor"
            print("gpu call: torch")
    """,
    "cupy": """
        import cupy
        if cupy.cuda.is_available():
            x = cupy.random.rand(301, 77, dtype=cupy.float32)
            y = memlab.transpose(x)
            cupy.cuda.Stream.null.synchronize()
            assert bool((y == x.T).all()), "memlab.transpose of a CuPy array"
            print("gpu call: cupy")
    """,
    "jax": """
        import jax, jax.numpy as jnp
        if any(d.platform == "gpu" for d in jax.devices()):
            x = jax.device_put(jnp.arange(301 * 77, dtype=jnp.float32).reshape(301, 77), jax.devices("gpu")[0])
            assert bool((jax.jit(memlab.transpose)(x) == x.T).all()), "memlab.transpose of a jax.Array"
            print("gpu call: jax")
    """,
    None: "",
}


def _program(framework: str | None, memlab_first: bool) -> str:
    load = "import memlab\nprint('libmemlab:', memlab.library_path())"
    framework_import = f"import {framework}" if framework else ""
    first, second = (load, framework_import) if memlab_first else (framework_import, load)
    calls = """
        assert memlab.transpose_path(1 << 40, 2 << 40, 1, 64, 64, 4) == "aligned"
        print("devices:", memlab.device_count())
    """
    return "\n".join([first, second, CPU_CHECK[framework], textwrap.dedent(calls),
                      textwrap.dedent(GPU_CALL[framework]), "print('ok')"])


def _run(framework: str | None, memlab_first: bool) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    return subprocess.run([sys.executable, "-c", _program(framework, memlab_first)], env=env, capture_output=True,
                          text=True, timeout=300)


def _need(framework: str | None) -> None:
    if framework and importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} is not installed")


@pytest.mark.parametrize("framework, memlab_first", [
    ("torch", True),   # libmemlab loaded, then torch imported: the order that crashed inside torch's registry
    ("torch", False),
    ("cupy", True),
    ("cupy", False),
    ("jax", True),
    ("jax", False),
    (None, True),      # no framework at all
], ids=["memlab-then-torch", "torch-then-memlab", "memlab-then-cupy", "cupy-then-memlab", "memlab-then-jax",
        "jax-then-memlab", "memlab-alone"])
def test_a_fresh_process_loads_libmemlab_and_a_framework_in_either_order(framework, memlab_first, lib_available):
    _need(framework)
    r = _run(framework, memlab_first)
    assert r.returncode == 0, f"exit {r.returncode} (a negative one is the signal)\n{r.stdout}\n{r.stderr}"
    assert r.stdout.rstrip().endswith("ok"), r.stdout + r.stderr


def test_memlab_imports_no_framework_of_its_own(lib_available):
    """Loading libmemlab imports nothing beside it: a process without torch stays without torch."""
    code = "import sys, memlab\nmemlab.library_path()\nprint(sorted(m for m in ('torch', 'cupy', 'jax') " \
           "if m in sys.modules))"
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout


def test_no_other_library_binds_to_libmemlab(lib_available, tmp_path):
    """The cause of the crash, held without any framework: ld.so's own account (LD_DEBUG=bindings) of a process
    that loads libmemlab. Before libmemlab exported its C ABI alone, the C++ runtime it loads (libstdc++.so.6,
    relocated in libmemlab's scope) bound its own std::string functions to libmemlab's copies, and libraries
    loaded later (torch's) bound GNU_UNIQUE statics to libmemlab's: every C++ library in the process ran code of
    libmemlab's compiler. Now nothing but libmemlab itself binds to libmemlab."""
    import glob

    import memlab

    lib = str(memlab.library_path().resolve())
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["LD_DEBUG"] = "bindings"
    env["LD_DEBUG_OUTPUT"] = str(tmp_path / "ld")
    env["MEMLAB_LIBRARY"] = lib
    r = subprocess.run([sys.executable, "-c", "import memlab\nmemlab.library_path()\nprint(memlab.device_count())"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    log = "".join(Path(p).read_text(errors="replace") for p in glob.glob(str(tmp_path / "ld") + "*"))
    if "binding file" not in log:
        pytest.skip("this C library's loader writes no LD_DEBUG=bindings account")
    assert f"binding file {lib} " in log, "libmemlab's own bindings are in the account"
    foreign = sorted({line.split("binding file ", 1)[1].split(" ", 1)[0] for line in log.splitlines()
                      if f" to {lib} " in line and f"binding file {lib} " not in line})
    assert foreign == [], f"bound to libmemlab's symbols: {foreign}"
