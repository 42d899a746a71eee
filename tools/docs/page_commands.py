#!/usr/bin/env python3
"""Every command a user page shows runs as typed after the quickstart: the ctests docs_commands_<page>.

    tools/docs/page_commands.py --bin DIR [--root DIR] [--shard I/N] [--list] PAGE...
    tools/docs/page_commands.py --plan PAGE...     the shares of each page's ctests (CMake reads it)

What a command is. Each line of a ```sh, ```bash, ```shell or ```console block of a user page (README.md,
docs/*.md, docs/labs/*.md, docs/results/README.md), a trailing \\ joining the next line, a leading "$ " prompt
dropped, a "# comment" dropped. Leading NAME=value words are its environment.

Which commands run (here, on a machine without a GPU, from the repository root, with DIR -- the build's bin
folder -- first on PATH, as `memlab` is after the quickstart):
  - `memlab` with --help, -h or --version anywhere, and any `memlab` subcommand but run, check and device
    (`memlab list ...`, `memlab inspect ...`; a subcommand that does not exist fails), and
    `memlab check --replay ...`: none of them touches a GPU;
  - `memlab-plot`, `memlab-compare`, `memlab-plot-check`, `memlab-transpose-shapes` and `memlab-report` (and any memlab-*
    with --help), reading committed files: they draw or compare committed results. One that reads a file no earlier command of the page writes must name a committed
    file (or write the reader's own as a placeholder, `<run>.json`: then it is a template).
  A command too long for a ctest of 10 s (SLOW: `memlab-transpose-shapes heatmap` draws four maps of 35,288
  cells, ~11 s of CPU) is checked instead of run: every file it reads exists and `PROG SUBCOMMAND --help` exits 0.
  Their output files (the value of -o, --out, --out-dir, --output) are written to a temporary folder instead of
  the path typed, so that a page's command cannot overwrite a committed file; globs (*, **) are expanded as
  bash's globstar would. A command that runs fails the test when it exits non-zero.
Which are recognised and listed, not run:
  - needs a GPU: `memlab run`, `memlab check` (no --replay), `memlab device`, `memlab-peers`, torchrun, srun,
    mpirun, ncu, nvidia-smi, compute-sanitizer, `make run`, `bash tools/gpu/...`, `python3 tools/studies/...`,
    and any command that reads a file an earlier command of the page writes (its --out / -o);
  - a template: a word holding "...", an angle-bracket placeholder or a $VARIABLE the page leaves to the reader;
  - the rest (setup and build: make, cmake, ctest, pip, git, export, cd, ...; memlab-report on the
    reader's own files, memlab-fleet): listed.
Also fails: a memlab program (memlab, memlab-*) or a repository path (tools/..., build/...) the command names
that does not exist: a page must name what the quickstart gives. Exit 1 with one line per problem, 0 otherwise;
--list prints each command with what was done with it.
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
SHELLS = {"sh", "bash", "shell", "console"}
GPU_MEMLAB = {"run", "check", "device"}
PLOT_TOOLS = {"memlab-plot", "memlab-compare", "memlab-plot-check", "memlab-transpose-shapes", "memlab-report"}
GPU_PROGRAMS = {"memlab-peers", "torchrun", "srun", "mpirun", "ncu", "nvidia-smi", "compute-sanitizer", "nsys"}
OUTPUT_FLAGS = {"-o", "--out", "--out-dir", "--output"}
SLOW = {("memlab-transpose-shapes", "heatmap")}  # (program, subcommand): checked with --help, not run
TEMPLATE = re.compile(r"\.\.\.|<[^>\s]*>|\$\{?[A-Za-z_]")
OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1"}
FILE_LIKE = re.compile(r"(^|/)[^/\s]+\.(json|csv|md|txt|log|png)$|/")


def commands_of(path):
    """(line, text) of every command of the page's shell blocks."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, fence, pending, start = [], None, "", 0
    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = (m.group(1)[0], len(m.group(1)), m.group(2).lower())
            continue
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] and not m.group(2):
            fence = None
            pending = ""
            continue
        if fence[2] not in SHELLS:
            continue
        text = line.strip()
        if not pending:
            start = n
            if text.startswith("$ "):
                text = text[2:]
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        text = pending + text
        pending = ""
        try:
            words = shlex.split(text, comments=True)
        except ValueError:
            words = text.split()
        if words:
            out.append((start, text.split(" #")[0].strip() if " #" in text else text, words))
    return out


def split_env(words):
    env = {}
    i = 0
    while i < len(words) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i]):
        k, v = words[i].split("=", 1)
        env[k] = v
        i += 1
    if i < len(words) and words[i] == "env":  # env NAME=value ... program
        i += 1
        while i < len(words) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i]):
            k, v = words[i].split("=", 1)
            env[k] = v
            i += 1
    return env, words[i:]


def outputs_of(words):
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w in OUTPUT_FLAGS] + \
        [w.split("=", 1)[1] for w in words if w.split("=", 1)[0] in OUTPUT_FLAGS and "=" in w]


def classify(words, written, root):
    """(kind, why): kind is run, gpu, template, other or missing."""
    env, cmd = split_env(words)
    if not cmd:
        return "other", "an environment setting"
    if any(w in OPERATORS for w in cmd):
        return "other", "a pipeline or a redirection: not run"
    if any(TEMPLATE.search(w) for w in words):
        return "template", "a template for the reader to fill in"
    prog = cmd[0]
    name = os.path.basename(prog)
    args = cmd[1:]
    wants_help = any(a in ("--help", "-h", "--version") for a in args)
    if prog.startswith(("build/", "./build/")):
        return "missing", f"{prog}: a page names the program as the quickstart puts it on PATH (memlab)"
    # Repository paths must exist, whatever the command.
    for w in cmd:
        rel = w.split("=", 1)[-1]
        if re.match(r"^(tools|build|docs|src|tests|examples|references|python)/", rel) and not any(
                c in rel for c in "*?[") and rel not in written and rel not in outputs_of(cmd) and \
                not os.path.exists(os.path.join(root, rel)):
            return "missing", f"{rel} does not exist"
    own = set(outputs_of(cmd))
    reads_written = [a for a in args if a in written and a not in own]
    if name == "memlab" or name.startswith("memlab-"):
        if wants_help or (name == "memlab" and (not args or args[0] not in GPU_MEMLAB)):
            return "run", ""  # list, inspect, help, and a subcommand that does not exist (it fails)
        if name == "memlab" and args[:1] == ["check"] and any(a.startswith("--replay") for a in args):
            return ("gpu", f"reads {reads_written[0]}, written by a command before") if reads_written else ("run", "")
        if name in PLOT_TOOLS:
            if reads_written:
                return "gpu", f"reads {reads_written[0]}, written by a command before"
            return "run", ""
        if name in GPU_PROGRAMS or name == "memlab":
            return "gpu", "needs a GPU"
        return "other", "a tool on the reader's own files: listed"
    if name in GPU_PROGRAMS:
        return "gpu", "needs a GPU"
    if name == "make" and "run" in args:
        return "gpu", "needs a GPU"
    if name in ("bash", "sh") and args and args[0].startswith("tools/gpu/"):
        return "gpu", "a GPU machine's script"
    if name.startswith("python") and args and args[0].startswith(("tools/studies/", "tools/gpu/")):
        return "gpu", "a GPU study"
    return "other", "setup, build or another tool: listed"


def is_heavy(words):
    """A command that takes seconds: memlab inspect (cuobjdump over an arch) or a plotting tool."""
    _, cmd = split_env(words)
    name = os.path.basename(cmd[0]) if cmd else ""
    return (name == "memlab" and cmd[1:2] == ["inspect"] and not any(a in ("--help", "-h") for a in cmd)) or \
        (name in ("memlab-plot", "memlab-plot-check", "memlab-transpose-shapes", "memlab-report") and "--help" not in cmd)


def expand(words, root):
    out = []
    for w in words:
        if any(c in w for c in "*?[") and not w.startswith("-"):
            found = sorted(glob.glob(os.path.join(root, w), recursive=True))
            out += [os.path.relpath(f, root) for f in found] or [w]
        else:
            out.append(w)
    return out


def redirect_outputs(words, tmp):
    out = list(words)
    for i, w in enumerate(out):
        if w in OUTPUT_FLAGS and i + 1 < len(out):
            out[i + 1] = os.path.join(tmp, os.path.basename(out[i + 1].rstrip("/")) or "out")
        elif "=" in w and w.split("=", 1)[0] in OUTPUT_FLAGS:
            flag, value = w.split("=", 1)
            out[i] = f"{flag}={os.path.join(tmp, os.path.basename(value.rstrip('/')) or 'out')}"
    return out


def run(words, root, bindir, timeout):
    env_add, cmd = split_env(words)
    if cmd and (os.path.basename(cmd[0]), cmd[1] if len(cmd) > 1 else "") in SLOW:
        reads = [a for a in cmd[2:] if not a.startswith("-") and FILE_LIKE.search(a) and a not in outputs_of(cmd)]
        missing = [a for a in reads if not glob.glob(os.path.join(root, a))]
        if missing:
            return 2, f"{missing[0]}: no such file (a slow command is checked: the files it reads, then --help)"
        words = [f"{k}={v}" for k, v in env_add.items()] + cmd[:2] + ["--help"]
        env_add, cmd = split_env(words)
    env = dict(os.environ)
    env.update(env_add)
    env["PATH"] = os.path.abspath(bindir) + os.pathsep + env.get("PATH", "")
    env["CUDA_VISIBLE_DEVICES"] = env_add.get("CUDA_VISIBLE_DEVICES", "")  # never a GPU, even on a GPU machine
    env.setdefault("MPLBACKEND", "Agg")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = redirect_outputs(expand(cmd, root), tmp)
        try:
            p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
        except FileNotFoundError:
            return 127, f"{cmd[0]}: command not found"
        except subprocess.TimeoutExpired:
            return 124, f"still running after {timeout} s"
        tail = (p.stderr.strip() or p.stdout.strip()).splitlines()[-1:] or [""]
        return p.returncode, tail[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--bin", help="the folder of the built memlab (first on PATH); needed but for --plan")
    ap.add_argument("--shard", default="0/1",
                    help="I/N: run the I-th of N shares: each heavy command (memlab inspect, the plotting tools) in a "
                         "share of its own, round the shares, the light ones in share 0")
    ap.add_argument("--plan", action="store_true",
                    help="print, per page, how many shares its ctests take (one per heavy command, at least one) and "
                         "whether one runs memlab inspect (then it takes the SASS tests' lock)")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--list", action="store_true", help="print every command and what was done with it")
    ap.add_argument("pages", nargs="+")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    if args.plan:
        for page in args.pages:
            heavy, written = [], set()
            for _, _, w in commands_of(os.path.join(root, page)):
                if is_heavy(w) and classify(w, written, root)[0] == "run":
                    heavy.append(w)
                written |= set(outputs_of(w))
            inspects = any("inspect" in split_env(w)[1][1:2] for w in heavy)
            print(f"{page} {max(1, len(heavy))} {'inspect' if inspects else 'light'}")
        return 0
    if not args.bin or not os.path.isfile(os.path.join(args.bin, "memlab")):
        print(f"page_commands: --bin {args.bin}: no memlab there", file=sys.stderr)
        return 2
    shard, shards = (int(x) for x in args.shard.split("/"))
    problems, counts, heavy_seen = [], {}, 0
    for page in args.pages:
        rel = os.path.relpath(os.path.join(root, page), root)
        written = set()
        for n, text, words in commands_of(os.path.join(root, rel)):
            kind, why = classify(words, written, root)
            written |= set(outputs_of(words))
            if kind == "run":
                mine = shard == 0
                if is_heavy(words):
                    mine = heavy_seen % shards == shard
                    heavy_seen += 1
                if not mine:
                    continue
                code, tail = run(words, root, args.bin, args.timeout)
                if code != 0:
                    kind, why = "failed", f"exit {code}: {tail}"
                    problems.append(f"{rel}:{n}: {text}: {why}")
            elif kind == "missing":
                problems.append(f"{rel}:{n}: {text}: {why}")
            counts[kind] = counts.get(kind, 0) + 1
            if args.list:
                print(f"{rel}:{n}: [{kind}] {text}" + (f"  ({why})" if why else ""))
    for p in problems:
        print(p)
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    if problems:
        print(f"page_commands: {len(problems)} problem(s); commands: {summary}", file=sys.stderr)
        return 1
    print(f"page_commands: {' '.join(args.pages)}: {summary or 'no commands'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
