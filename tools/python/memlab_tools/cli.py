"""What the three commands share at their edges: one-line usage errors (exit 2), and no traceback for
a closed pipe or Ctrl-C.

Exit codes, every command: 0 success; 1 the command's own verdict (memlab-compare: a case is slower;
memlab-peers: a verification failed); 2 bad input (a flag, or a file that cannot be read or is not a
memlab results file: one line naming it and what is wrong); 3 a missing dependency or no GPU."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

OK, VERDICT, BAD_INPUT, MISSING_DEPENDENCY = 0, 1, 2, 3


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line ("memlab-plot: --only: ..."), exit 2."""

    def error(self, message: str):
        self.exit(BAD_INPUT, f"{self.prog}: {message} (--help lists the options)\n")


def fail(prog: str, message: str, code: int = BAD_INPUT) -> int:
    print(f"{prog}: {message}", file=sys.stderr)
    return code


def run(main: Callable[[list | None], int], argv=None) -> int:
    """main(argv), with a closed stdout (| head) and Ctrl-C ending quietly."""
    try:
        return main(argv)
    except BrokenPipeError:
        # The reader went away: nothing more to say, and no traceback at interpreter exit either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def write_text(path: str, text: str) -> None:
    """`text` to `path` through a temporary file renamed into place; OSError names what failed."""
    from .results import write_atomically

    write_atomically(path, text, raw=True)
