"""Checks every block-form twin against the dense reference built from K(i)
(docs/attention-variants.md), as ecpi's models/families_test.go does for its
own block forms: outputs and the gradients of q, k and v within 1e-4.

    python bench/peer/selftest.py        # exit status 1 on any mismatch
"""

import json
import os
import subprocess
import sys

import torch

import patterns
import models

QUIET = "--quiet" in sys.argv  # print only mismatches and the verdict


def say(ok, line):
    if not ok or not QUIET:
        print(line)


def check(name, pattern, n, impl, heads=4, dh=8, alpha=False):
    torch.manual_seed(n)
    q, k, v = (torch.randn(2, heads, n, dh, requires_grad=True) for _ in range(3))
    a = torch.rand(2, heads, n) * 0.8 + 0.1 if alpha else None
    got = pattern.attend(q, k, v, impl=impl, alpha=a)
    want = patterns.dense_reference(pattern, q, k, v, alpha=a)
    g_got = torch.autograd.grad((got * got).sum(), (q, k, v))
    g_want = torch.autograd.grad((want * want).sum(), (q, k, v))
    err = max([(got - want).abs().max().item()] + [(x - y).abs().max().item() for x, y in zip(g_got, g_want)])
    ok = err <= 1e-4
    say(ok, f"{'ok ' if ok else 'BAD'} {name:<34} n={n:<4} impl={impl:<6} max|Δ| {err:.2e}")
    return ok


# `ecpi mask` options that give each family the pattern `bench attention` times at window w.
MASK_OPTIONS = {
    "full": lambda w: [], "local": lambda w: [f"window={w}"], "ecp": lambda w: [f"half_segment={w}"],
    "s2": lambda w: [f"group={2 * w}"], "pi": lambda w: [f"window={w}"], "longformer": lambda w: [f"window={w}"],
    "bigbird": lambda w: [f"block={w}"],
}
SHADES = " ░▒▓█"


def mask_rows(pattern, head, n, cols, heads=4):
    """repl/cmd_pictures.go maskRows, from the twin's K(i): the picture `ecpi mask` draws."""
    every = pattern.allows(heads, n)
    allowed = every[min(head, every.shape[0] - 1)]
    skip = pattern.is_skip(n) & ~pattern.local.allows(1, n)[0] if isinstance(pattern, patterns.Pi) else torch.zeros(n, n, dtype=torch.bool)
    rows = max(1, min(n, cols // 2))
    out = []
    for r in range(rows):
        q0, q1 = r * n // rows, (r + 1) * n // rows
        line = ""
        for c in range(cols):
            k0, k1 = c * n // cols, (c + 1) * n // cols
            cell = allowed[q0:q1, k0:k1]
            local = int((cell & ~skip[q0:q1, k0:k1]).sum())
            skips = int((cell & skip[q0:q1, k0:k1]).sum())
            pairs = (q1 - q0) * (k1 - k0)
            if local == 0:
                line += "•" if skips else " "
            elif local == pairs:
                line += "█"
            else:
                line += SHADES[1 + min(2, 3 * local // pairs)]
        out.append(line)
    return out, int(allowed.sum())


def crosscheck(ecpi):
    """The twins' K(i) against ecpi's own (`ecpi mask --json`, every head), pair for pair."""
    ok = True
    for n, w in ((64, 8), (128, 8)):
        for variant, options in MASK_OPTIONS.items():
            pattern = patterns.bench_pattern(variant, n, window=w)
            bad = []
            for head in range(4):
                cmd = [ecpi, "mask", f"model={variant}", f"n={n}", "heads=4", f"head={head}", f"width={2 * n + 8}", "--json"] + options(w)
                got = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
                want, allowed = mask_rows(pattern, head, n, len(got["rows"][0]))
                if got["rows"] != want or got["allowed_pairs"] != allowed:
                    bad.append(head)
            ok &= not bad
            say(not bad, f"{'ok ' if not bad else 'BAD'} K(i) of the {variant} twin = ecpi mask's, n={n} w={w}" + (f" (heads {bad} differ)" if bad else ", 4 heads"))
    return ok


def main():
    cases = []
    for n, w in ((64, 8), (96, 8), (60, 8)):
        for variant in patterns.VARIANTS:
            if n % w and variant in ("ecp", "bigbird", "s2"):
                continue  # these families require the window (group) to divide n
            cases.append((variant, patterns.bench_pattern(variant, n, window=w), n))
    cases.append(("pi skips=2 (rows % M != 0)", patterns.Pi(8, 16, 2), 96))
    cases.append(("longformer dilation=2 global=3", patterns.Longformer(4, 2, 3), 64))
    # Windows of 128 and more are blocked finer than the window (window_spec).
    cases.append(("local window=130 (blocks of 65)", patterns.Local(130), 300))
    cases.append(("longformer window=130", patterns.Longformer(130, 1, 2), 300))
    cases.append(("pi window=130", patterns.Pi(130, 260, 1), 300))
    ok = True
    for name, pattern, n in cases:
        for impl in pattern.impls:
            if impl == "sdpa" and isinstance(pattern, patterns.Longformer) and pattern.dilation != 1:
                continue
            ok &= check(name, pattern, n, impl)
    ok &= check("pi with a gate α", patterns.Pi(8, 16, 3), 64, "matmul", alpha=True)
    ok &= models.selftest(say)
    ecpi = os.environ.get("ECPI_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "bin", "ecpi"))
    if os.path.exists(ecpi):
        ok &= crosscheck(ecpi)
    else:
        print(f"bench-peer self-test: no cross-check with `ecpi mask` ({ecpi} not built)")
    print("bench-peer self-test: every twin agrees with its definition, the golden ECP logits and ecpi's K(i)" if ok
          else "bench-peer self-test: MISMATCH (see above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
