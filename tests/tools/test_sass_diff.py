#!/usr/bin/env python3
"""tools/gpu/sass_diff.py on two small listings made here (its .txt input: saved `cuobjdump -sass` output): kernels
matched by name with nvcc's anonymous-namespace hash normalised away, a kernel whose name changed but whose SASS
did not reported as a rename (not a difference), and a changed body, a kernel gone and a kernel added failing."""
import contextlib
import io
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "gpu"))
import sass_diff  # noqa: E402


def listing(kernels):
    """A cuobjdump -sass listing of {mangled name: [instruction, ...]}."""
    out = []
    for name, body in kernels.items():
        out.append(f"\t\tFunction : {name}")
        out += [f"        /*{16 * i:04x}*/   {ins} ;   /* 0x000fe2000001ff00 */" for i, ins in enumerate(body)]
    return "\n".join(out) + "\n"


class SassDiff(unittest.TestCase):
    def run_diff(self, old, new):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for side, kernels in (("old", old), ("new", new)):
                paths.append(os.path.join(d, f"{side}.txt"))
                with open(paths[-1], "w") as f:
                    f.write(listing(kernels))
            out = io.StringIO()
            with mock.patch.object(sys, "argv", ["sass_diff.py", *paths]), contextlib.redirect_stdout(out):
                rc = sass_diff.main()
            return rc, out.getvalue()

    def test_the_same_code_under_another_anonymous_namespace_hash_is_the_same(self):
        body = ["LDG.E.128 R4, desc[UR4][R2.64]", "EXIT"]
        rc, out = self.run_diff({"_ZN12_GLOBAL__N_16kernelEv": body}, {"_ZN12_GLOBAL__N_16kernelEv": body})
        self.assertEqual(rc, 0, out)
        self.assertIn("1 kernels in both (0 of them renamed), 2 SASS lines compared; 0 changed", out)

    def test_a_renamed_kernel_with_identical_sass_is_a_rename(self):
        body = ["LDG.E.128 R4, desc[UR4][R2.64]", "STG.E.128 desc[UR4][R6.64], R4", "EXIT"]
        rc, out = self.run_diff({"_Z10old_kernelv": body, "_Z4keepv": ["EXIT"]},
                                {"_Z10new_kernelv": body, "_Z4keepv": ["EXIT"]})
        self.assertEqual(rc, 0, out)
        self.assertIn("renamed, SASS identical (3 lines): _Z10old_kernelv -> _Z10new_kernelv", out)
        self.assertIn("2 kernels in both (1 of them renamed)", out)

    def test_changed_gone_and_added_kernels_fail(self):
        rc, out = self.run_diff({"_Z1av": ["LDG.E R4", "EXIT"], "_Z1bv": ["NOP", "EXIT"]},
                                {"_Z1av": ["LDG.E.128 R4", "EXIT"], "_Z1cv": ["BAR.SYNC", "EXIT"]})
        self.assertEqual(rc, 1, out)
        self.assertIn("changed (1 of 2 lines -> 2): _Z1av", out)
        self.assertIn("only in old: _Z1bv", out)
        self.assertIn("only in new: _Z1cv", out)


if __name__ == "__main__":
    unittest.main()
