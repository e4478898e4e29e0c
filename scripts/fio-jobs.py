#!/usr/bin/env python3
"""Which of fio's own job files stripebench runs, and why each other is refused.

Not a test: a report of where fio users stand. For every job file in a fio
source tree's examples/*.fio and t/jobs/*.fio that uses a local I/O engine
(none given, or one of LOCAL_ENGINES), runs

    stripebench run --fio-job FILE --dry-run --allow-destructive --allow-holes SCRATCH

over a scratch file this script creates (4 TiB, sparse past its first 64 MiB:
examples/cross-stripe-verify.fio lays 30 jobs 124g apart, 3.6 TiB; a dry run
does no I/O, so the file stays 64 MiB on disk; ext4 takes files to 16 TiB)
(so a job's own filename= or
directory= is replaced by it, and nothing of the machine's is touched),
and prints each job's verdict (a job t/run-fio-tests.py gives a pre_job
is run after that pre-job, run for real on the scratch file, as fio's
runner does; t0027's pattern file is made as fio's runner makes it),: "runs", or stripebench's one-line reason.
The summary counts the jobs that run and the reasons, most frequent first.

A job file whose header comments document how to run it (a line such as
`fio examples/NAME.fio --section=default --ioengine=io_uring
--filename=/dev/nvme0n1`, with an optional `env VAR=VALUE` before it, and
continued over lines ending in a backslash) is run as its first documented
usage whose ioengine is local, through fio's command line:

    env VAR=VALUE stripebench fio OPTIONS FILE -- --dry-run --allow-destructive --allow-holes --no-progress

its --filename= the scratch file (or the scratch file typed after `--`
when it gives none); its line says so ("runs (as its header documents:
...)"). Other files are run bare, as above.

    scripts/fio-jobs.py --fio-src DIR [--sb PATH] [--verbose]

DIR is a checkout of axboe/fio, or its bare git directory (its HEAD's
examples/ and t/jobs/ are taken out of it); the commit is printed. Exit status 0 whatever the count: the figure is the report.
"""
import argparse
import collections
import os
import re
import shlex
import subprocess
import sys
import tempfile

# fio engines that do local I/O to a file or block device: what stripebench
# is for. (Network, GPU, zoned-command and special engines are not.)
LOCAL_ENGINES = {"sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "posixaio", "io_uring", "mmap"}


def engines(text):
    """The ioengine= values a job file names (its [global] and its jobs)."""
    return {m.group(1).strip() for m in re.finditer(r"^\s*ioengine\s*=\s*([^\s#;]+)", text, re.M)}


def documented_usage(text, name):
    """The first usage of the job file its header comments document with a
    local engine: (env, fio's options) of a line such as
    `env FIO_BS=4096 fio --ioengine=io_uring examples/NAME.fio` (`VAR=VALUE`
    words, with or without `env`, then `fio`, its options and the file),
    continued over lines ending in a backslash; None when there is none."""
    lines = []
    for raw in text.splitlines():
        l = raw.strip()
        if l.startswith("["):
            break  # the header ends at the first section
        if l.startswith((";", "#")):
            lines.append(re.sub(r"^[;#]\s?", "", l).rstrip())
    joined, cur = [], ""
    for l in lines:
        if l.endswith("\\") and not l.endswith("\\\\"):
            cur += l[:-1].strip() + " "
            continue
        joined.append(cur + l.strip())
        cur = ""
    for cmd in joined:
        try:
            words = shlex.split(cmd)
        except ValueError:
            continue
        env = {}
        if words[:1] == ["env"]:
            words = words[1:]
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            k, v = words.pop(0).split("=", 1)
            env[k] = v
        if words[:1] != ["fio"] or not any(os.path.basename(w) == name for w in words[1:]):
            continue
        opts = [w for w in words[1:] if os.path.basename(w) != name]
        given = [w.split("=", 1)[1] for w in opts if re.match(r"^--?ioengine=", w)]
        if given and given[-1] not in LOCAL_ENGINES:
            continue
        return env, opts
    return None


def with_scratch(opts, scratch):
    """The usage's options with its device (--filename) the scratch file;
    whether one was given."""
    out, given = [], False
    for w in opts:
        if re.match(r"^--?filename=", w):
            w, given = w.split("=", 1)[0] + "=" + scratch, True
        out.append(w)
    return out, given


def pre_jobs(src):
    """t/run-fio-tests.py's pairs: {job: the pre-job it runs first}."""
    try:
        with open(os.path.join(src, "t", "run-fio-tests.py"), errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        return {}
    pairs = re.findall(r"'job':\s*'([^']+\.fio)',[^}]*?'pre_job':\s*'([^']+\.fio)'", text)
    return dict(pairs)


def commit(git):
    try:
        out = subprocess.run(git + ["log", "-1", "--format=%h %s"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown (no git history)"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown (no git)"


def reason(stderr):
    """stripebench's one-line reason: its last line that says what was wrong."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    errs = [l for l in lines if "error" in l or "cannot" in l or "refus" in l]
    line = (errs or lines or ["(no message)"])[-1]
    line = re.sub(r"^stripebench: (error: )?", "", line)
    # One reason per kind: the option named, not the file's own values.
    return line[:160]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fio-src", required=True, help="a checkout of axboe/fio")
    ap.add_argument("--sb", default=None, help="the stripebench binary (default: build the release one)")
    ap.add_argument("--verbose", action="store_true", help="print every job's verdict, not only the refused")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    sb = os.path.abspath(a.sb) if a.sb else None
    if sb is None:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=os.path.join(here, ".."), check=True)
        sb = os.path.join(here, "..", "target", "release", "stripebench")
    git = ["git", "-C", a.fio_src]
    unpacked = None
    if not os.path.isdir(os.path.join(a.fio_src, "examples")):
        # A bare repository: its HEAD's job files, unpacked for the run.
        git = ["git", "--git-dir", a.fio_src]
        unpacked = tempfile.TemporaryDirectory(prefix="fio-src.")
        tar = subprocess.run(git + ["archive", "HEAD", "examples", "t/jobs", "t/run-fio-tests.py"], capture_output=True, timeout=60)
        if tar.returncode != 0:
            sys.exit(f"fio-jobs: {a.fio_src} has no examples/ and is not a fio git directory")
        subprocess.run(["tar", "-x", "-C", unpacked.name], input=tar.stdout, check=True)
        a.fio_src = unpacked.name
    jobs = []
    for sub in ("examples", "t/jobs"):
        d = os.path.join(a.fio_src, sub)
        if not os.path.isdir(d):
            sys.exit(f"fio-jobs: {d} is not a directory: give --fio-src a checkout of axboe/fio")
        jobs += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".fio"))
    local, other = [], []
    for j in jobs:
        with open(j, errors="replace") as f:
            e = engines(f.read(1 << 20))
        (local if e <= LOCAL_ENGINES else other).append(j)
    verdicts, documented = {}, {}
    with tempfile.TemporaryDirectory(prefix="fio-jobs.") as tmp:
        scratch = os.path.join(tmp, "scratch.dat")
        with open(scratch, "wb") as f:
            # 64 MiB of data, then a hole to 4 TiB so that a job's size=
            # fits (a dry run does no I/O; --allow-holes lets it pass).
            for _ in range(64):
                f.write(os.urandom(1 << 20))
            f.truncate(4 << 40)
        pre = pre_jobs(a.fio_src)
        # What fio's runner makes before a job (its FioJobFileTest_t0027's
        # setup: the pattern file t0027 writes).
        with open(os.path.join(tmp, "t0027.pattern"), "wb") as f:
            f.write(os.urandom(16 << 10))
        for j in local:
            if os.path.basename(j) in pre:
                # fio's runner runs this job's pre-job first, for real: it
                # leaves what the job reads (t0031's iolog). So do we.
                first = os.path.join(os.path.dirname(j), pre[os.path.basename(j)])
                subprocess.run(
                    [sb, "run", "--fio-job", first, "--allow-destructive", "--allow-holes", "--no-progress", scratch],
                    capture_output=True, text=True, timeout=120, cwd=tmp,
                )
            with open(j, errors="replace") as f:
                usage = documented_usage(f.read(1 << 20), os.path.basename(j))
            if usage:
                # As its header says to run it: fio's command line, the
                # device the scratch file.
                env, opts = usage
                opts, given = with_scratch(opts, scratch)
                cmd = [sb, "fio", *opts, j, "--", "--dry-run", "--allow-destructive", "--allow-holes", "--no-progress"]
                if not given:
                    cmd.append(scratch)
                shown = " ".join(
                    [f"env {k}={v}" for k, v in env.items()] + [w for w in opts if not re.match(r"^--?filename=", w)]
                )
                documented[j] = f"as its header documents: {shown}"
            else:
                env = {}
                cmd = [sb, "run", "--fio-job", j, "--dry-run", "--allow-destructive", "--allow-holes", "--no-progress", scratch]
            p = subprocess.run(
                cmd, capture_output=True, text=True, timeout=60, cwd=tmp, env={**os.environ, **env},
            )
            verdicts[j] = "runs" if p.returncode == 0 else reason(p.stderr)
    runs = [j for j, v in verdicts.items() if v == "runs"]
    print(f"fio at {commit(git)}: {len(jobs)} job files, {len(local)} with local engines ({', '.join(sorted(LOCAL_ENGINES))}, or none given)")
    for j in local:
        v = verdicts[j]
        how = documented.get(j)
        if a.verbose or v != "runs" or how:
            said = (f"runs ({how})" if v == "runs" else f"{v} (run {how})") if how else v
            print(f"  {os.path.relpath(j, a.fio_src)}: {said}")
    print(f"runs: {len(runs)} of {len(local)}")
    why = collections.Counter(v for v in verdicts.values() if v != "runs")
    # The reason without its values: what kind of thing stopped the job.
    kinds = collections.Counter()
    for v, n in why.items():
        # A run refused when it was checked: the run option named.
        m = (re.search(r"fio's `([a-z_0-9]+)", v) or re.search(r"`([a-z_0-9]+)[=`]", v)
             or re.search(r"none ran\): (--[a-z-]+(?: with --[a-z-]+)?)", v))
        if m:
            kinds[m.group(1)] += n
        elif "run at once in fio" in v:
            # A group whose jobs fio runs together are different workloads.
            kinds["jobs of one group that differ (run at once in fio)"] += n
        else:
            kinds[v[:60]] += n
    print("refused, by what stopped them:")
    for k, n in kinds.most_common():
        print(f"  {n:3d}  {k}")


if __name__ == "__main__":
    main()
