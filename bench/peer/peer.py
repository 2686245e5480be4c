"""The PyTorch side of `make bench-peer`: one measurement per process, one
JSON object on stdout. The driver (run.py) starts a fresh process for every
(work, size, thread count), so the thread count is set before torch starts its
pools; a process may time several forms (impls, eager/compiled) one after the
other, one JSON line each.

    python peer.py attention --variant ecp --n 4096 --threads 1 [--impls matmul,sdpa] [--modes eager,compile]
    python peer.py train --family pi --size large --threads 2 [--modes eager,compile]
    python peer.py peak --threads 2

Peak memory: resource.getrusage's max RSS after the measurement minus max RSS
just before it (torch imported, inputs or model built), for the process's
first measurement only (max RSS never goes down). tracemalloc does not see
torch's allocations; max RSS does, at page granularity.
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time


def max_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def setup_threads(threads):
    # Before torch starts its thread pools (the driver also sets OMP_NUM_THREADS).
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import torch
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    return torch


def timed(fn, warmup, runs):
    """fn() `warmup` times untimed, then `runs` times; the list of seconds and the
    first call's time (for torch.compile: mostly compilation)."""
    times, first = [], None
    for i in range(warmup + runs):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        if i == 0:
            first = elapsed
        if i >= warmup:
            times.append(elapsed)
    return times, first


def modes(a):
    """(impl, compile) pairs to measure in this process, in order."""
    return [(impl, mode == "compile") for impl in a.impls.split(",") for mode in a.modes.split(",")]


def emit(result, first, base):
    """One JSON line. Peak memory is the process's own only for its first measurement."""
    result["peak_rss_mb"] = max_rss_mb() - base if first else None
    result["memory"] = "ru_maxrss delta" if first else "not measured (not the process's first measurement)"
    print(json.dumps(result), flush=True)


def cmd_attention(a):
    torch = setup_threads(a.threads)
    import patterns
    pattern = patterns.bench_pattern(a.variant, a.n, window=a.window, heads=a.heads)
    gen = torch.Generator().manual_seed(a.n)
    q, k, v = (torch.randn(a.batch, a.heads, a.n, a.head_dim, generator=gen, requires_grad=True) for _ in range(3))
    with torch.no_grad():  # builds the masks once (patterns.cached), before any torch.compile
        for impl in pattern.impls:
            pattern.attend(q, k, v, impl=impl)
    base = max_rss_mb()
    for i, (impl, compiled) in enumerate(m for m in modes(a) if m[0] in pattern.impls):
        def step(q, k, v, impl=impl):
            # As bench/attention.go timeAttention: loss = Σ out², gradients of q, k, v.
            out = pattern.attend(q, k, v, impl=impl)
            loss = (out * out).sum()
            return torch.autograd.grad(loss, (q, k, v))

        fn = torch.compile(step) if compiled else step
        result = dict(work="attention", variant=a.variant, n=a.n, impl=impl, threads=a.threads, compile=compiled,
                      runs=a.runs, warmup=a.warmup, pairs=pattern.scored_pairs(a.n))
        try:
            times, first = timed(lambda: fn(q, k, v), a.warmup, a.runs)
            result.update(ms=1000 * statistics.median(times), first_ms=1000 * first)
        except Exception as e:  # e.g. a compile failure: reported, not fatal
            result.update(ms=None, error=f"{type(e).__name__}: {str(e)[:300]}")
        emit(result, i == 0, base)


def cmd_train(a):
    torch = setup_threads(a.threads)
    import torch.nn.functional as F
    import models
    torch.manual_seed(1)
    c = models.Config.of(a.family, a.size)
    impl = a.impl or models.default_impl(a.family)
    model = models.LM(c, impl).train()
    opt, opt_kind = models.optimizer(model)
    params = [p for p in model.parameters()]
    flops = models.flops_per_step(c, model)
    gen = torch.Generator().manual_seed(2)

    def loss_of(x, y):
        return F.cross_entropy(model(x).flatten(0, 1), y.flatten())

    with torch.no_grad():  # builds the masks once (patterns.cached), before any torch.compile
        model(torch.zeros(1, c.n, dtype=torch.long))
    base = max_rss_mb()
    for i, mode in enumerate(a.modes.split(",")):
        loss_fn = torch.compile(loss_of) if mode == "compile" else loss_of

        def step():
            # A batch of random bytes (ecpi samples windows of a text corpus; the
            # content does not change the work), forward, backward, clip, AdamW.
            batch = torch.randint(0, 256, (c.batch, c.n + 1), generator=gen)
            loss = loss_fn(batch[:, :-1], batch[:, 1:])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
            opt.step()
            return loss.item()  # ecpi reads the loss back every step too

        result = dict(work="train", family=a.family, size=a.size, impl=impl, threads=a.threads, compile=mode == "compile",
                      steps=a.steps, warmup=a.warmup, params=sum(p.numel() for p in params),
                      matmul_params=models.matmul_params(model), flops_per_step=flops, optimizer=opt_kind, config=vars(c))
        try:
            times, first = timed(step, a.warmup, a.steps)
            seconds = sum(times)
            result.update(tokens_per_s=c.batch * c.n * a.steps / seconds, ms_per_step=1000 * seconds / a.steps,
                          ms_per_step_median=1000 * statistics.median(times), first_ms=1000 * first,
                          gflops=flops * a.steps / seconds / 1e9)
        except Exception as e:
            result.update(tokens_per_s=None, error=f"{type(e).__name__}: {str(e)[:300]}")
        emit(result, i == 0, base)


def cmd_peak(a):
    torch = setup_threads(a.threads)
    size = a.size
    x, y = torch.randn(size, size), torch.randn(size, size)
    times, _ = timed(lambda: torch.mm(x, y), 2, a.runs)
    best = min(times)
    print(json.dumps(dict(work="peak", threads=a.threads, size=size, runs=a.runs,
                          gflops=2 * size ** 3 / best / 1e9, median_gflops=2 * size ** 3 / statistics.median(times) / 1e9)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    at = sub.add_parser("attention", help="one attention layer, forward+backward")
    at.add_argument("--variant", required=True)
    at.add_argument("--n", type=int, required=True)
    at.add_argument("--window", type=int, default=256)
    at.add_argument("--batch", type=int, default=2)
    at.add_argument("--heads", type=int, default=4)
    at.add_argument("--head-dim", type=int, default=32)
    at.add_argument("--impls", default="matmul,sdpa", help="forms to time, where the variant has them")
    at.add_argument("--runs", type=int, default=5)
    at.add_argument("--warmup", type=int, default=1)
    at.add_argument("--threads", type=int, default=1)
    at.add_argument("--modes", default="eager", help="eager, compile (torch.compile), or both: eager,compile")
    tr = sub.add_parser("train", help="training steps of a model twin")
    tr.add_argument("--family", required=True)
    tr.add_argument("--size", choices=("small", "large"), default="small")
    tr.add_argument("--impl", choices=("matmul", "sdpa"))
    tr.add_argument("--steps", type=int, default=10)
    tr.add_argument("--warmup", type=int, default=2)
    tr.add_argument("--threads", type=int, default=1)
    tr.add_argument("--modes", default="eager", help="eager, compile (torch.compile), or both: eager,compile")
    pk = sub.add_parser("peak", help="fp32 matmul GFLOP/s (torch.mm)")
    pk.add_argument("--size", type=int, default=2048)
    pk.add_argument("--runs", type=int, default=10)
    pk.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    {"attention": cmd_attention, "train": cmd_train, "peak": cmd_peak}[a.cmd](a)


if __name__ == "__main__":
    main()
