"""`make bench-peer`: ecpi and its PyTorch twins side by side, interleaved.

Every measurement is its own process. A round visits every cell (one
attention variant at one length, or one model family at one size) and, in
each cell, measures ecpi (Go backend, XLA backend) and PyTorch (1 thread, 2
threads) one after the other, in an order that rotates from round to round,
so slow drifts of the machine's load fall on both sides alike. The table
reports per cell the median over rounds. Load average, machine, versions
and every raw measurement go to bench/peer/results/<date>.json.

    python bench/peer/run.py --quick        # a few minutes
    python bench/peer/run.py                # the full comparison (hours on 2 busy cores)
    python bench/peer/run.py --help         # every option

Times: ratio = PyTorch time / ecpi time for attention, ecpi tokens/s /
PyTorch tokens/s for training: >= 1.0 means ecpi is at least as fast.
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ATTENTION_VARIANTS = ("full", "local", "ecp", "s2", "pi", "longformer", "bigbird")
FAMILIES = ("ecp", "local", "pi", "full")
# groups: S2's own group form (bench/peer/patterns.py S2), which only that variant has.
ATTENTION_FORMS = {"quick": "matmul:eager,sdpa:eager,groups:eager",
                   "full": "matmul:eager,sdpa:eager,matmul:compile,groups:eager,groups:compile"}
TRAIN_MODES = {"quick": "eager", "full": "eager,compile"}


def loadavg():
    return list(os.getloadavg())


class Runner:
    """Starts measurements, keeps every raw record, logs stderr."""

    def __init__(self, args, log):
        self.args, self.log, self.records = args, log, []

    def run(self, cmd, env=None, tag=None):
        """Runs one measurement process; returns (its JSON lines, max RSS in MB, seconds, error)."""
        load = loadavg()
        start = time.time()
        full_env = dict(os.environ, **(env or {}))
        out_path, err_path = self.log.name + ".out", self.log.name + ".err"
        with open(out_path, "w") as out, open(err_path, "w") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=full_env, cwd=ROOT)
            try:
                _, status, usage = self._wait(proc)
                code = os.waitstatus_to_exitcode(status)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                code = "timeout"
        seconds = time.time() - start
        lines = []
        for line in open(out_path).read().splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    lines.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        stderr = open(err_path).read()
        self.log.write(stderr)
        error = None if code == 0 else f"exit {code}: {' '.join(stderr.split())[-300:]}"
        self.log.write(f"# {' '.join(cmd)} -> {code} in {seconds:.1f}s (load {load[0]:.2f})\n")
        self.log.flush()
        record = dict(tag=tag, cmd=cmd, load=load, seconds=seconds, max_rss_mb=usage.ru_maxrss / 1024,
                      results=lines, error=error, at=datetime.datetime.now().isoformat(timespec="seconds"))
        self.records.append(record)
        return record

    def note(self, tag, error):
        """A record of a measurement not run (and why)."""
        self.log.write(f"# {tag}: {error}\n")
        record = dict(tag=tag, cmd=None, load=loadavg(), seconds=0.0, max_rss_mb=None, results=[], error=error,
                      at=datetime.datetime.now().isoformat(timespec="seconds"))
        self.records.append(record)
        return record

    def _wait(self, proc):
        deadline = time.time() + self.args.timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                return pid, status, usage
            if time.time() > deadline:
                raise subprocess.TimeoutExpired(proc.args, self.args.timeout)
            time.sleep(0.05)


# ---------------------------------------------------------------------------
# What one side of a cell runs
# ---------------------------------------------------------------------------


# ecpi restarts itself with glibc's malloc asking for transparent huge pages
# (xla/malloc.go): both sides page-fault 40x less on large buffers and run up
# to 2x faster. PyTorch gets the same setting, so that the comparison is of the
# computations, not of the allocator set-up (--torch-malloc default: without).
HUGE_PAGES = "glibc.malloc.hugetlb=1"


def torch_env(threads, malloc):
    env = {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "PYTHONWARNINGS": "ignore"}
    if malloc == "hugepages":
        env["GLIBC_TUNABLES"] = HUGE_PAGES
    return env


# What the table says about the allocator; runs saved before ecpi set huge pages have no torch_malloc.
MALLOC_NOTE = {"hugepages": f"both sides with {HUGE_PAGES} (transparent huge pages)",
               "default": f"ecpi with {HUGE_PAGES}, PyTorch with glibc's default malloc",
               None: "glibc's default malloc on both sides"}


def peer_cmd(a, *args):
    return [a.python, os.path.join(HERE, "peer.py"), *args]


def run_side(r, a, key, side):
    """Runs one side (ecpi backend or PyTorch thread count) of one cell: one record."""
    work, what, size = key
    kind, which = side
    if kind == "torch":
        env, tag = torch_env(which, a.torch_malloc), (work, what, size, f"torch {which}t")
    else:
        env, tag = None, (work, what, size, f"ecpi {which}")
    if work == "attention" and kind == "ecpi":
        cmd = [a.ecpi, "bench", "attention", f"models={what}", f"n={size}", f"runs={a.runs}", f"window={a.window}",
               "--json", f"backend={which}"]
    elif work == "attention":
        forms = a.attention_forms.split(",")
        # In order of first mention: the process measures matmul:eager first, whose peak memory it reports.
        impls = ",".join(dict.fromkeys(f.split(":")[0] for f in forms))
        modes = ",".join(dict.fromkeys(f.split(":")[1] for f in forms))
        cmd = peer_cmd(a, "attention", f"--variant={what}", f"--n={size}", f"--runs={a.runs}", f"--window={a.window}",
                       f"--threads={which}", f"--impls={impls}", f"--modes={modes}")
    elif kind == "ecpi":
        steps = a.steps_small if size == "small" else a.steps_large
        extra = a.ecpi_large_args.split() if size == "large" else []
        if size == "large" and not extra:
            return r.note(tag, "no --ecpi-large-args given")
        cmd = [a.ecpi, "bench", "train", f"model={what}", f"steps={steps}", "--json", f"backends={which}"] + extra
    else:
        steps = a.steps_small if size == "small" else a.steps_large
        cmd = peer_cmd(a, "train", f"--family={what}", f"--size={size}", f"--steps={steps}", f"--threads={which}",
                       f"--modes={a.train_modes}")
    return r.run(cmd, env=env, tag=tag)


# Each record becomes one entry of its cell: parse_<work>_<side kind>(record, options).


def parse_attention_ecpi(rec, a):
    rows = [x for x in rec["results"] if "variant" in x]
    return dict(ms=rows[0]["ms"] if rows else None, compile_ms=rows[0].get("compile_ms") if rows else None,
                rss_mb=rec.get("max_rss_mb") if rows else None, error=rec["error"])


def parse_attention_torch(rec, a):
    """Every form's median ms; the first form's peak memory (the process's own)."""
    forms = a.attention_forms.split(",")
    by_form = {}
    for x in rec["results"]:
        form = f"{x['impl']}:{'compile' if x['compile'] else 'eager'}"
        if form in forms and x.get("ms") is not None:
            by_form[form] = x["ms"]
    first = rec["results"][0] if rec["results"] else {}
    # The process's whole growth (masks, every form) bounds the first form's peak from above.
    return dict(forms=by_form, rss_mb=first.get("peak_rss_mb"), process_rss_mb=rec.get("max_rss_mb") if first else None,
                error=rec["error"] or next((x.get("error") for x in rec["results"] if x.get("error")), None))


def parse_train_ecpi(rec, a):
    rows = [x for x in rec["results"] if "tokens_per_s" in x]
    return dict(tokens_per_s=rows[0]["tokens_per_s"] if rows else None, ms_per_step=rows[0].get("ms_per_step") if rows else None,
                compile_ms=rows[0].get("compile_ms") if rows else None, error=None if rows else rec["error"] or "no result")


def parse_train_torch(rec, a):
    out = dict(modes={}, error=rec["error"])
    for x in rec["results"]:
        mode = "compile" if x["compile"] else "eager"
        out["flops_per_step"] = x.get("flops_per_step")
        if x.get("tokens_per_s"):
            out["modes"][mode] = x["tokens_per_s"]
            out[f"{mode}_first_ms"] = x.get("first_ms")
        elif x.get("error"):
            out["error"] = f"{mode}: {x['error']}"
    return out


PARSERS = {("attention", "ecpi"): parse_attention_ecpi, ("attention", "torch"): parse_attention_torch,
           ("train", "ecpi"): parse_train_ecpi, ("train", "torch"): parse_train_torch}


def cells_of(records, a):
    """Cells {(work, variant or family, n or size): {side: [entry per round]}} and the
    median matmul peak per thread count, from the records (live or saved)."""
    cells, peaks = {}, {}
    for rec in records:
        tag = rec.get("tag") or ()
        if tag and tag[0] == "peak":
            if rec["results"]:
                peaks.setdefault(int(tag[1]), []).append(rec["results"][0]["gflops"])
            continue
        if not tag or tag[0] not in ("attention", "train"):
            continue
        work, what, size, side = tag
        label = side
        if what == "sdpa":  # SDPA sits in the full attention cell, next to the naive twin
            what, label = "full", side.replace("torch", "sdpa")
        key = (work, what, int(size) if work == "attention" else size)
        entry = PARSERS[(work, side.split()[0])](rec, a)
        cells.setdefault(key, {}).setdefault(label, []).append(entry)
    return cells, {t: median(v) for t, v in peaks.items()}


# ---------------------------------------------------------------------------
# Rounds, medians, the table
# ---------------------------------------------------------------------------


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def rotate(items, k):
    k %= len(items)
    return items[k:] + items[:k]


def plan(a):
    """The cells of a round, in order: (work, variant or family, n or size)."""
    cells = []
    if "attention" in a.only:
        cells += [("attention", variant, n) for n in a.n for variant in a.variants]
    if "train" in a.only:
        cells += [("train", family, size) for size in a.sizes for family in a.families]
    return cells


def mem_available_mb():
    try:
        return int(re.search(r"MemAvailable:\s+(\d+)", open("/proc/meminfo").read()).group(1)) / 1024
    except (OSError, AttributeError):
        return None


def too_big(a, cells, variant, n, label):
    """Dense n×n forms at a length whose predicted memory (the same side's peak at
    the longest shorter n, times (n/n')²) exceeds --mem-fraction of MemAvailable:
    a reason to skip (an out-of-memory kill could hit other work on the machine)."""
    if variant != "full":
        return None
    shorter = [(m, x) for (w, v, m), cell in cells.items() if w == "attention" and v == variant and m < n
               for x in cell.get(label, []) if x.get("process_rss_mb") or x.get("rss_mb")]
    if not shorter:
        return None
    m, x = max(shorter, key=lambda t: t[0])
    predicted, available = (x.get("process_rss_mb") or x["rss_mb"]) * (n / m) ** 2, mem_available_mb()
    if available and predicted > a.mem_fraction * available:
        return f"skipped: predicted {predicted / 1024:.1f} GB > {a.mem_fraction:.0%} of the {available / 1024:.1f} GB available"
    return None


def measure(r, a, key, side):
    """One side of one cell, unless it would not fit in memory; the full
    attention cell's PyTorch side also times SDPA (the baseline a user would pick)."""
    work, what, size = key
    kind, which = side
    label = f"ecpi {which}" if kind == "ecpi" else f"torch {which}t"
    skip = too_big(a, cells_of(r.records, a)[0], what, size, label) if work == "attention" else None
    if skip:
        r.note((work, what, size, label), skip)
    else:
        run_side(r, a, key, side)
    if work == "attention" and what == "full" and kind == "torch":  # SDPA is memory-light: it always runs
        run_side(r, a, (work, "sdpa", size), side)


def run_rounds(a, r, save):
    sides = [("ecpi", b) for b in a.backends] + [("torch", t) for t in a.threads]
    for rnd in range(a.rounds):
        print(f"round {rnd + 1}/{a.rounds}  load {loadavg()[0]:.2f}", flush=True)
        for t in a.threads:
            r.run(peer_cmd(a, "peak", f"--threads={t}"), env=torch_env(t, a.torch_malloc), tag=("peak", t))
        for step, key in enumerate(plan(a)):
            for side in rotate(sides, rnd + step):  # who goes first changes from cell to cell and round to round
                measure(r, a, key, side)
            save()
            cell = cells_of(r.records, a)[0].get(key, {})
            summary = summary_att(cell) if key[0] == "attention" else summary_train(cell)
            print(f"  {key[0]} {key[1]:<10} {key[2]:<6} {summary}", flush=True)


def best_torch_attention(cell, prefix="torch"):
    """The fastest (form, threads) by median over rounds: (ms, label, per-thread best)."""
    per = {}
    for key, ms in cell.items():
        if not key.startswith(prefix + " "):
            continue
        threads = key.split()[1]
        forms = {}
        for m in ms:
            for form, v in m["forms"].items():
                forms.setdefault(form, []).append(v)
        for form, vs in forms.items():
            per[(form, threads)] = median(vs)
    if not per:
        return None, None, per
    (form, threads), ms = min(per.items(), key=lambda kv: kv[1])
    return ms, f"{form} {threads}", per


def summary_att(cell):
    parts = []
    for key, ms in cell.items():
        if key.startswith("ecpi"):
            parts.append(f"{key} {fmt(median([m['ms'] for m in ms]), 'ms')}")
    best, label, _ = best_torch_attention(cell)
    parts.append(f"torch best {fmt(best, 'ms')} ({label})")
    return "  ".join(parts)


def best_torch_train(cell):
    per = {}
    for key, ms in cell.items():
        if key.startswith("torch "):
            for mode in ("eager", "compile"):
                v = median([m["modes"].get(mode) for m in ms])
                if v is not None:
                    per[(mode, key.split()[1])] = v
    if not per:
        return None, None, per
    (mode, threads), v = max(per.items(), key=lambda kv: kv[1])
    return v, f"{mode} {threads}", per


def summary_train(cell):
    parts = [f"{k} {fmt(median([m['tokens_per_s'] for m in v]), 'tok/s')}" for k, v in cell.items() if k.startswith("ecpi")]
    best, label, _ = best_torch_train(cell)
    parts.append(f"torch best {fmt(best, 'tok/s')} ({label})")
    return "  ".join(parts)


def fmt(v, unit="", digits=None):
    if v is None:
        return "—"
    if unit == "ms":
        return f"{v:.0f} ms" if v >= 100 else f"{v:.1f} ms"
    if unit == "tok/s":
        return f"{v:,.0f}"
    if unit == "x":
        return f"{v:.2f}×"
    if unit == "%":
        return f"{100 * v:.1f} %"
    if unit == "MB":
        return f"{v:,.0f}"
    return str(v)


def mark(ok):
    return "—" if ok is None else ("✅" if ok else "❌")


def growth_exponent(points):
    """Slope of log(memory) against log(n) between the shortest and longest n."""
    points = [(n, m) for n, m in points if m is not None and m > 0]
    if len(points) < 2:
        return None
    (n0, m0), (n1, m1) = points[0], points[-1]
    import math
    return math.log(m1 / m0) / math.log(n1 / n0)


def compile_times(records):
    """Median seconds of torch.compile's first call (compilation included) per kind of work."""
    firsts = {}
    for rec in records:
        for x in rec.get("results", []):
            if x.get("compile") and x.get("first_ms"):
                kind = x["work"] if x["work"] == "attention" else f"training, {x.get('size')} model"
                firsts.setdefault(kind, []).append(x["first_ms"] / 1000)
    return {k: (median(v), min(v), max(v)) for k, v in firsts.items()}


def memory_measured_by(records):
    """Which PyTorch attention form each process's memory comes from: its first
    measurement, as the records say (older runs measured another form first)."""
    forms = sorted({f"{x['impl']}:{'compile' if x['compile'] else 'eager'}"
                    for rec in records for x in rec.get("results") or []
                    if x.get("work") == "attention" and x.get("memory") == "ru_maxrss delta"})
    if len(forms) == 1:
        return f"the {forms[0]} form, each process's first measurement"
    if forms:
        return f"each process's first measurement ({', '.join(forms)})"
    return "each process's first measurement"


def report(a, cells, peaks, meta, records=()):
    """The Markdown tables and the target marks; returns (text, summary dict)."""
    out, targets = [], []
    out.append(f"Measured {meta['date']} on {meta['cpu']} ({meta['cores']} cores, {meta['mem_gb']:.0f} GB), "
               f"load average {meta['load_before'][0]:.2f} before / {meta['load_after'][0]:.2f} after "
               f"(median at measurement start {meta['load_median']:.2f}); {meta['mode']} mode: {a.rounds} round(s), "
               f"median per cell; ecpi {meta['ecpi_commit']}, PyTorch {meta['torch']}; "
               f"{MALLOC_NOTE[meta.get('torch_malloc')]}.")
    out.append("")
    baseline = meta.get("ecpi_rss_baseline_mb", {})
    att = {k: v for k, v in cells.items() if k[0] == "attention"}
    if att:
        out.append(f"**Attention layer, forward+backward** (B=2, H=4, dh=32, window {a.window}; ms, median of "
                   f"{a.runs} runs after a warm-up, then median over rounds). ratio = PyTorch best / ecpi best "
                   "(≥ 1.0: ecpi at least as fast). PyTorch best = fastest of "
                   f"{a.attention_forms.replace(',', ', ')} at {', '.join(map(str, a.threads))} thread(s)"
                   + (" (groups: S2's G×G group form, which ecpi computed until 2026-12-03). " if "groups" in a.attention_forms else ". ")
                   + "Peak MB: max RSS growth during the measurement (ecpi: the process's max RSS minus that of a tiny "
                   f"run on the same backend; PyTorch: {memory_measured_by(records)}, `ru_maxrss` delta).")
        out.append("")
        cols = [f"ecpi {b}" for b in a.backends]
        out.append("| variant | n | " + " | ".join(cols) + " | PyTorch best (form, threads) | PyTorch 1t / 2t best | ratio | ≥ 1.0 | peak MB ecpi " + " / ".join(a.backends) + " / PyTorch |")
        out.append("|---|---|" + "---|" * len(cols) + "---|---|---|---|---|")
        full_rows = []
        for (kind, variant, n), cell in sorted(att.items(), key=lambda kv: (ATTENTION_VARIANTS.index(kv[0][1]), kv[0][2])):
            ecpi = {b: median([m["ms"] for m in cell.get(f"ecpi {b}", [])]) for b in a.backends}
            mem = {b: median([m["rss_mb"] for m in cell.get(f"ecpi {b}", []) if m["ms"] is not None]) for b in a.backends}
            mem = {b: (v - baseline.get(b, 0)) if v is not None else None for b, v in mem.items()}
            best_ecpi = min([v for v in ecpi.values() if v is not None], default=None)
            torch_best, label, per = best_torch_attention(cell)
            per_t = " / ".join(fmt(min([v for (f, t), v in per.items() if t == f"{th}t"], default=None), "ms") for th in a.threads)
            torch_mem = median([m["rss_mb"] for m in cell.get(f"torch {a.threads[0]}t", [])])
            if variant == "full":
                sdpa, sdpa_label, _ = best_torch_attention(cell, "sdpa")
                sdpa_mem = median([m["rss_mb"] for m in cell.get(f"sdpa {a.threads[0]}t", [])])
                full_rows.append((n, ecpi, best_ecpi, sdpa, sdpa_label, torch_best, label, mem, sdpa_mem, torch_mem))
                ratio = sdpa / best_ecpi if sdpa and best_ecpi else None
                ok = ratio is not None and ratio >= 1 / 1.5
                targets.append(dict(target="full attention within 1.5× of SDPA", cell=f"n={n}", value=ratio, met=None if ratio is None else ok))
                out.append(f"| full (vs SDPA is_causal) | {n} | " + " | ".join(fmt(ecpi[b], "ms") for b in a.backends) +
                           f" | {fmt(sdpa, 'ms')} (SDPA {sdpa_label.split()[-1] if sdpa_label else ''}) | naive dense {fmt(torch_best, 'ms')}{f' ({label})' if label else ''} | "
                           f"{fmt(ratio, 'x')} | {mark(None if ratio is None else ok)} ≥ 0.67 | " +
                           " / ".join(fmt(mem[b], "MB") for b in a.backends) + f" / {fmt(sdpa_mem, 'MB')} |")
                continue
            ratio = torch_best / best_ecpi if torch_best and best_ecpi else None
            ok = None if ratio is None else ratio >= 1.0
            targets.append(dict(target="sparse attention ≥ 1.0× PyTorch block form", cell=f"{variant} n={n}", value=ratio, met=ok))
            out.append(f"| {variant} | {n} | " + " | ".join(fmt(ecpi[b], "ms") for b in a.backends) +
                       f" | {fmt(torch_best, 'ms')} ({label}) | {per_t} | {fmt(ratio, 'x')} | {mark(ok)} | " +
                       " / ".join(fmt(mem[b], "MB") for b in a.backends) + f" / {fmt(torch_mem, 'MB')} |")
        problems = sorted({f"{k} {variant} n={n}: {m['error'][:200]}" for (w, variant, n), cell in att.items()
                           for k, ms in cell.items() for m in ms if m.get("error")})
        if problems:
            out.append("")
            out.append("Not measured or failed: " + "; ".join(problems))
        if full_rows:
            for b in a.backends:
                e = growth_exponent([(row[0], row[7][b]) for row in full_rows])
                ok = None if e is None else e <= 1.2
                targets.append(dict(target=f"full attention peak memory linear in n (ecpi {b})", cell="", value=e, met=ok))
            e = growth_exponent([(row[0], row[8]) for row in full_rows])
            out.append("")
            out.append("Full attention's peak memory grows as n^e between the shortest and longest n: " +
                       ", ".join(f"ecpi {b} e = {fmt_e(growth_exponent([(row[0], row[7][b]) for row in full_rows]))}" for b in a.backends) +
                       f", SDPA e = {fmt_e(e)} (linear: e ≈ 1, n×n scores: e ≈ 2).")
        out.append("")
    tr = {k: v for k, v in cells.items() if k[0] == "train"}
    if tr:
        peak = max([p for p in peaks.values() if p], default=None)
        out.append(f"**Training** (tokens/s, median over rounds; ecpi: `bench train`, PyTorch: the twin, random bytes). "
                   f"ratio = ecpi best / PyTorch best (≥ 1.0: ecpi at least as fast). Peak fp32 matmul "
                   f"(torch.mm 2048², best of 10): " + ", ".join(f"{fmt_g(v)} GFLOP/s at {t} thread(s)" for t, v in peaks.items()) +
                   f"; % peak = model FLOPs/s (6·matmul params·tokens + 12·dh·H·pairs·B per layer) / {fmt_g(peak)}.")
        out.append("")
        cols = [f"ecpi {b}" for b in a.backends]
        torch_cols = [f"{m} {t}t" for m in a.train_modes.split(",") for t in a.threads]
        out.append("| family | size | " + " | ".join(cols) + " | PyTorch " + " | ".join(torch_cols) + " | PyTorch best | ratio | ≥ 1.0 | % peak ecpi / PyTorch |")
        out.append("|---|---|" + "---|" * (len(cols) + len(torch_cols)) + "---|---|---|---|")
        for (kind, family, size), cell in sorted(tr.items(), key=lambda kv: (kv[0][2] != "small", FAMILIES.index(kv[0][1]))):
            ecpi = {b: median([m["tokens_per_s"] for m in cell.get(f"ecpi {b}", [])]) for b in a.backends}
            errors = {b: next((m["error"] for m in cell.get(f"ecpi {b}", []) if m.get("error")), None) for b in a.backends}
            best_ecpi = max([v for v in ecpi.values() if v is not None], default=None)
            torch_best, label, per = best_torch_train(cell)
            flops = next((m.get("flops_per_step") for k, ms in cell.items() if k.startswith("torch") for m in ms if m.get("flops_per_step")), None)
            from models import SIZES
            tokens_per_step = SIZES[size]["batch"] * SIZES[size]["n"]
            frac = lambda tps: tps * flops / tokens_per_step / 1e9 / peak if tps and flops and peak else None
            ratio = best_ecpi / torch_best if best_ecpi and torch_best else None
            ok = None if ratio is None else ratio >= 1.0
            targets.append(dict(target="training ≥ 1.0× PyTorch", cell=f"{family} {size}", value=ratio, met=ok))
            if size == "large":
                f = frac(best_ecpi)
                targets.append(dict(target="≥ 30 % of matmul peak, larger model", cell=family, value=f, met=None if f is None else f >= 0.30))
            ecpi_cells = [fmt(ecpi[b], "tok/s") if ecpi[b] else ("n/a" if errors[b] else "—") for b in a.backends]
            torch_cells = [fmt(per.get((m, f"{t}t")), "tok/s") for m in a.train_modes.split(",") for t in a.threads]
            out.append(f"| {family} | {size} | " + " | ".join(ecpi_cells) + " | " + " | ".join(torch_cells) +
                       f" | {label or '—'} | {fmt(ratio, 'x')} | {mark(ok)} | {fmt(frac(best_ecpi), '%')} / {fmt(frac(torch_best), '%')} |")
        notes = sorted({f"{k}: {m['error'][:160]}" for (kind, fam, size), cell in tr.items() for k, ms in cell.items()
                        for m in ms if m.get("error") and k.startswith("ecpi") and size == "large"})
        if notes:
            out.append("")
            out.append("ecpi on the larger model: " + notes[0] + (f" (and {len(notes) - 1} more)" if len(notes) > 1 else ""))
        out.append("")
    compiled = compile_times(records)
    if compiled:
        out.append("torch.compile, first call (compilation, then one step): " + "; ".join(
            f"{kind} median {m:.0f} s (range {lo:.0f}–{hi:.0f} s)" for kind, (m, lo, hi) in compiled.items()) +
            ". Inductor caches compiled graphs on disk, so later processes of the same shape compile faster.")
        out.append("")
    out.append("**Targets (issue 12)**")
    out.append("")
    groups = {}
    for t in targets:
        groups.setdefault(t["target"], []).append(t)
    for name, ts in groups.items():
        met = [t for t in ts if t["met"]]
        unknown = [t for t in ts if t["met"] is None]
        missed = [t["cell"] or "" for t in ts if t["met"] is False]
        line = f"- {name}: {len(met)}/{len(ts)} met"
        if any(missed):
            line += f"; not met: {', '.join(c for c in missed if c)}"
        if unknown:
            line += f"; not measured: {len(unknown)}"
        out.append(line)
    return "\n".join(out), targets


def fmt_e(e):
    return "—" if e is None else f"{e:.2f}"


def fmt_g(v):
    return "—" if v is None else f"{v:.0f}"


# ---------------------------------------------------------------------------
# Machine, versions
# ---------------------------------------------------------------------------


def machine_info(a):
    cpu = platform.processor() or "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0.0
    try:
        mem = int(re.search(r"MemTotal:\s+(\d+)", open("/proc/meminfo").read()).group(1)) / 2 ** 20
    except (OSError, AttributeError):
        pass
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    simd = "AVX-512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "no AVX2")
    run = lambda cmd: subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout.strip()
    torch_version = run([a.python, "-c", "import torch; print(torch.__version__)"])
    return dict(cpu=f"{cpu} ({simd})", cores=os.cpu_count(), mem_gb=mem, kernel=platform.release(),
                ecpi_commit=run(["git", "rev-parse", "--short", "HEAD"]), torch=torch_version,
                python=run([a.python, "-c", "import sys; print(sys.version.split()[0])"]),
                doctor=run([a.ecpi, "doctor"]))


def ecpi_baseline(r, a):
    """Max RSS of a tiny `bench attention` run per backend: what ecpi's process costs before the work."""
    base = {}
    for b in a.backends:
        rec = r.run([a.ecpi, "bench", "attention", "models=local", "n=64", "window=16", "runs=1", "--json", f"backend={b}"],
                    tag=("baseline", b))
        base[b] = rec["max_rss_mb"]
    return base


def interrupted_note(cells, planned):
    """What an interrupted run measured: how many rounds, and which cells have fewer than the most."""
    counts = {key: max((len(v) for v in cell.values()), default=0) for key, cell in cells.items()}
    most, fewest = max(counts.values(), default=0), min(counts.values(), default=0)
    if fewest >= planned:
        return ""
    fewer = [" ".join(map(str, key)) for key, count in counts.items() if count < most]
    parts = [f"{most} of {planned} rounds measured"] if most < planned else []
    if fewer:
        parts.append(f"measured in {fewest} of {planned} rounds only: " + ", ".join(fewer))
    return "\n\nInterrupted: " + "; ".join(parts) + "."


def render(path, write=True):
    """The table of a run from its JSON (live, finished or interrupted); with
    write, also stores it (table, targets, cells) in the JSON and next to it as .md."""
    sys.path.insert(0, HERE)
    raw = json.load(open(path))
    a = argparse.Namespace(**raw["options"])
    cells, peaks = cells_of(raw["records"], a)
    text, targets = report(a, cells, peaks, raw["meta"], raw["records"])
    text += interrupted_note(cells, a.rounds)
    text += f"\n\nTotal time {raw['meta']['seconds'] / 60:.0f} min. Raw measurements: {os.path.relpath(path, ROOT)}"
    if write:
        raw.update(cells={" ".join(map(str, k)): v for k, v in cells.items()}, peaks=peaks, targets=targets, table=text)
        with open(path, "w") as f:
            json.dump(raw, f, indent=1, default=str)
        with open(os.path.splitext(path)[0] + ".md", "w") as f:
            f.write(text + "\n")
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="n=1024,4096, 1 round, 3 runs, small model, eager PyTorch only")
    p.add_argument("--only", default="attention,train", help="attention, train or both")
    p.add_argument("--variants", default=",".join(ATTENTION_VARIANTS))
    p.add_argument("--n", help="attention lengths (default 1024,2048,4096,8192; quick 1024,4096)")
    p.add_argument("--window", type=int, default=256)
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--sizes", help="small, large (default both; quick: small)")
    p.add_argument("--rounds", type=int, help="interleaved rounds (default 3; quick 1)")
    p.add_argument("--runs", type=int, help="timed runs per attention measurement (default 5; quick 3)")
    p.add_argument("--steps-small", type=int, default=10, help="timed training steps, small model")
    p.add_argument("--steps-large", type=int, default=5, help="timed training steps, larger model")
    p.add_argument("--threads", default="1,2", help="PyTorch thread counts")
    p.add_argument("--attention-forms", help=f"PyTorch forms impl:mode (default {ATTENTION_FORMS['full']}; quick {ATTENTION_FORMS['quick']})")
    p.add_argument("--train-modes", help=f"PyTorch training modes (default {TRAIN_MODES['full']}; quick {TRAIN_MODES['quick']})")
    p.add_argument("--backends", default="go,xla:cpu", help="ecpi backends")
    p.add_argument("--torch-malloc", choices=("hugepages", "default"), default="hugepages",
                   help=f"PyTorch's glibc malloc: hugepages ({HUGE_PAGES}, as ecpi runs) or glibc's default")
    p.add_argument("--ecpi-large-args", default="size=large",
                   help="options passed to `ecpi bench train` for the larger model (d=256, 4 layers, n=1024, H=4, batch 8, window 128)")
    p.add_argument("--ecpi", default=os.path.join(ROOT, "bin", "ecpi"))
    p.add_argument("--python", default=sys.executable, help="the Python with PyTorch")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per measurement process")
    p.add_argument("--mem-fraction", type=float, default=0.6,
                   help="skip a dense n×n measurement whose predicted peak exceeds this share of MemAvailable")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--report", metavar="RESULTS.json", help="rebuild the table of a saved run from its raw measurements, print it and store it again in the .json and .md (no measuring)")
    a = p.parse_args()
    if a.report:
        return print(render(a.report))
    mode = "quick" if a.quick else "full"
    a.n = [int(x) for x in (a.n or ("1024,4096" if a.quick else "1024,2048,4096,8192")).split(",")]
    a.sizes = (a.sizes or ("small" if a.quick else "small,large")).split(",")
    a.rounds = a.rounds or (1 if a.quick else 3)
    a.runs = a.runs or (3 if a.quick else 5)
    if a.quick:
        a.steps_small = min(a.steps_small, 5)
    a.attention_forms = a.attention_forms or ATTENTION_FORMS[mode]
    a.train_modes = a.train_modes or TRAIN_MODES[mode]
    a.variants = a.variants.split(",")
    a.families = a.families.split(",")
    a.threads = [int(t) for t in a.threads.split(",")]
    a.backends = a.backends.split(",")
    a.only = a.only.split(",")
    sys.path.insert(0, HERE)
    os.makedirs(a.out, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M%S") + ("-quick" if a.quick else "")
    base = os.path.join(a.out, stamp)
    started = time.time()
    meta = dict(date=datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), mode=mode, load_before=loadavg(),
                torch_malloc=a.torch_malloc)
    with open(base + ".log", "w") as log:
        r = Runner(a, log)
        meta.update(machine_info(a))
        print(f"bench-peer ({mode}): {meta['cpu']}, {meta['cores']} cores, load {meta['load_before'][0]:.2f}; "
              f"ecpi {meta['ecpi_commit']}, PyTorch {meta['torch']}; raw log {base}.log", flush=True)
        meta["ecpi_rss_baseline_mb"] = ecpi_baseline(r, a)

        def save():
            # After every cell, so an interrupted run can still be reported (--report).
            meta["load_after"] = loadavg()
            meta["seconds"] = time.time() - started
            meta["load_median"] = median([rec["load"][0] for rec in r.records]) or 0.0
            with open(base + ".json", "w") as f:
                json.dump(dict(meta=meta, options=vars(a), records=r.records), f, indent=1, default=str)
        try:
            run_rounds(a, r, save)
        finally:
            save()
    print()
    print(render(base + ".json"))
    for scratch in (base + ".log.out", base + ".log.err"):
        if os.path.exists(scratch):
            os.remove(scratch)


if __name__ == "__main__":
    main()
