#!/usr/bin/env python3
"""Golden fixtures that pin ecpi's models to the ECP authors' PyTorch code.

Usage (see README.md next to this file):

    python golden.py --authors /tmp/ecp-authors --out models/testdata/golden

--authors is a checkout of https://github.com/MetaMain/ECPTransformer at
commit 9fbf532 (arXiv 2412.06106). Its modules are imported from there at run
time; nothing of theirs is copied into this repository.

For every (family, config) the script builds the authors' model, gives every
parameter a seeded random value on a float16-exact grid, runs it in eval mode
(float64) on a seeded byte batch the way their AutoRegressiveWrapper.forward
does, and writes NAME.safetensors.gz holding the state_dict, the tokens, the
target-window logits (a documented subset of positions) and the loss.

This is a development tool only: `make test` never runs it.
"""

import argparse
import gzip
import hashlib
import io
import json
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.numpy import load as st_load
from safetensors.numpy import save as st_save

AUTHORS_COMMIT = "9fbf53212b0bab761e7ed142dd6128a0171df72f"

# git blob ids of the authors' model files at AUTHORS_COMMIT (`git ls-tree -r`);
# lets us tell an unpacked archive (no .git) at the right commit from another version.
AUTHORS_BLOBS = {
    "models/AutoRegressiveWrapper.py": "d4fc65dd8eed58f79e370227416a6196cd8ead01",
    "models/CompressedDoubleAttentionTransformer.py": "191a724b191c2811d5222e516ec15d35a5cc1492",
    "models/DoubleAttentionTransformer.py": "9917d6c45145fbbd30806bf4561b086124192375",
    "models/ECPAttentionTransformer.py": "6e849ed973f751d8df80d661afeefc2addf3b287",
    "models/PerceiverAR_baseline.py": "37fdc7a8a48a80cc5d8e70d9f94a6463c9202934",
    "models/Rotary_Embedding_torch.py": "c05cec45305eedbb8cab3e95fbeccd52b6798383",
    "models/__init__.py": "8b137891791fe96927ad78e64b0aad7bded08bdc",
    "models/sSplitAttentionTransformer.py": "28ce76d36e15f19b700517402f39cf43fcd0403d",
}

# family -> (module, class)
FAMILIES = {
    "ecp": ("models.ECPAttentionTransformer", "ECPAttentionTransformer"),
    "perceiverar": ("models.PerceiverAR_baseline", "PerceiverARTransformer"),
    "double": ("models.DoubleAttentionTransformer", "DoubleAttentionTransformer"),
    "compressed": ("models.CompressedDoubleAttentionTransformer", "CompressedDoubleAttentionTransformer"),
    "ssplit": ("models.sSplitAttentionTransformer", "sSplitAttentionTransformer"),
}

# Family options at the tiny configuration.
FAMILY_KWARGS = {
    "ecp": {"num_segments": 4},  # half-segment h = 64/4 = 16
    "perceiverar": {"latent_len": 32},
    "double": {"latent_len": 32},
    "compressed": {"latent_len": 32, "compression_size": 16},
    "ssplit": {"latent_len": 32, "num_segments": 2},
}

SEQUENCE_LEN = 64
VOCAB = 256  # bytes


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def check_authors(path: str) -> str:
    """Returns a short description of how the checkout was verified.

    Exits if the model files differ from the expected commit (unless --force)."""
    notes = []
    head = None
    try:
        head = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        # A git checkout inside some other repository would report that repository's HEAD.
        top = subprocess.run(["git", "-C", path, "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(path):
            head = None
    except (OSError, subprocess.CalledProcessError):
        head = None
    if head is None:
        notes.append("not a git checkout: HEAD unknown")
    elif head != AUTHORS_COMMIT:
        notes.append(f"git HEAD is {head}, expected {AUTHORS_COMMIT}")
    mismatched = []
    for rel, want in AUTHORS_BLOBS.items():
        try:
            with open(os.path.join(path, rel), "rb") as f:
                data = f.read()
        except OSError:
            mismatched.append(rel + " (missing)")
            continue
        if blob_id(data) != want and blob_id(data.replace(b"\r\n", b"\n")) != want:
            mismatched.append(rel)
    if mismatched:
        return "MISMATCH: " + "; ".join(notes + ["files differ from commit " + AUTHORS_COMMIT[:7] + ": " + ", ".join(mismatched)])
    if head == AUTHORS_COMMIT:
        return "git HEAD is " + AUTHORS_COMMIT
    return "; ".join(notes) + "; all model files match commit " + AUTHORS_COMMIT[:7] + " byte for byte"


def import_family(family: str):
    import importlib
    module, cls = FAMILIES[family]
    return getattr(importlib.import_module(module), cls)


def grid_round(x: np.ndarray, sig_bits: int) -> np.ndarray:
    """Rounds to `sig_bits` significant bits, then to float16 (11 = plain float16 rounding).

    The result is exactly representable in float16, and the model runs on exactly these values."""
    x = np.asarray(x, dtype=np.float64)
    if sig_bits < 11:
        m, e = np.frexp(x)  # x = m * 2**e, 0.5 <= |m| < 1
        x = np.ldexp(np.round(np.ldexp(m, sig_bits)), e - sig_bits)
    h = x.astype(np.float16)
    assert np.all(np.isfinite(h))
    return h


def init_parameters(model: torch.nn.Module, rng: np.random.Generator, sig_bits: int) -> dict:
    """Seeded random values for every parameter, in state_dict order; returns name -> float16 array."""
    kinds = {}
    for mname, mod in model.named_modules():
        for pname, _ in mod.named_parameters(recurse=False):
            kinds[f"{mname}.{pname}" if mname else pname] = (mod, pname)
    values = {}
    for name, param in model.named_parameters():
        mod, pname = kinds[name]
        shape = tuple(param.shape)
        if isinstance(mod, torch.nn.Linear) and pname == "weight":
            v = rng.normal(0.0, 1.0 / math.sqrt(mod.in_features), shape)  # variance 1/fan_in
        elif isinstance(mod, torch.nn.Linear) and pname == "bias":
            v = rng.normal(0.0, 0.1, shape)
        elif isinstance(mod, torch.nn.LayerNorm) and pname == "weight":
            v = rng.uniform(0.8, 1.2, shape)
        elif isinstance(mod, torch.nn.LayerNorm) and pname == "bias":
            v = rng.normal(0.0, 0.1, shape)
        elif isinstance(mod, torch.nn.Embedding):
            v = rng.normal(0.0, 1.0, shape)
        else:
            raise SystemExit(f"no initialisation rule for parameter {name} ({type(mod).__name__})")
        values[name] = grid_round(v, sig_bits)
    return values


def build(family: str, config: dict, values: dict, dtype: torch.dtype) -> torch.nn.Module:
    model = import_family(family)(**config)
    model.eval()
    model.to(dtype)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(values[name].astype(np.float64)).to(dtype))
    clear_rotary_caches(model)
    return model


def clear_rotary_caches(model):
    # RotaryEmbedding caches its angle table by length, in whatever dtype it was first built;
    # clear it so that a float64 run never reuses a float32 table (or vice versa).
    for mod in model.modules():
        if hasattr(mod, "cache") and isinstance(mod.cache, dict):
            mod.cache.clear()


def latent_len_of(family, config):
    # ECP: the main script sets latent_length = sequence_length (ECPTransformer_main.py:53).
    return config["sequence_len"] if family == "ecp" else config["latent_len"]


def run(model, family, config, tokens: np.ndarray):
    """Returns (logits of the target window [B, L, V], loss) as the AutoRegressiveWrapper computes them."""
    from models.AutoRegressiveWrapper import AutoRegressiveWrapper
    L = latent_len_of(family, config)
    seg = config["sequence_len"] // config.get("num_segments", 1)
    x = torch.from_numpy(tokens.astype(np.int64))
    with torch.no_grad():
        clear_rotary_caches(model)
        logits = model(x[:, :-1])[:, -L:, :]
        clear_rotary_caches(model)
        loss = AutoRegressiveWrapper(model, latent_len=L, segment_len=seg).eval()(x)
        # Cross-check: the same cross-entropy from the logits we record.
        again = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, -L:].reshape(-1))
        assert abs(float(again) - float(loss)) <= 1e-12 * max(1.0, abs(float(loss))), (float(again), float(loss))
    return logits, loss


def unused_parameters(model, family, config, tokens):
    """Parameters that receive no gradient from the loss (never reached by the forward pass)."""
    from models.AutoRegressiveWrapper import AutoRegressiveWrapper
    L = latent_len_of(family, config)
    model.zero_grad(set_to_none=True)
    clear_rotary_caches(model)
    AutoRegressiveWrapper(model, latent_len=L, segment_len=1).eval()(
        torch.from_numpy(tokens.astype(np.int64))).backward()
    unused, zero = [], []
    for name, p in model.named_parameters():
        if p.grad is None:
            unused.append(name)
        elif not torch.any(p.grad != 0):
            zero.append(name)
    model.zero_grad(set_to_none=True)
    if zero:
        raise SystemExit(f"{family}: parameters reached by the graph but with all-zero gradient: {zero}")
    return unused


def sensitivities(family, config, values, tokens, logits64):
    """Max |logit change| when one detail is changed on the same weights and tokens."""
    out = {}
    variants = {"layernorm_eps_1e-3": (config, 1e-3)}
    if family == "ecp":
        variants["num_segments_2"] = (dict(config, num_segments=2), None)
        variants["num_segments_8"] = (dict(config, num_segments=8), None)
    for label, (cfg, eps) in variants.items():
        model = build(family, cfg, values, torch.float64)
        if eps is not None:
            for mod in model.modules():
                if isinstance(mod, torch.nn.LayerNorm):
                    mod.eps = eps
        logits, _ = run(model, family, cfg, tokens)
        out[label] = float((logits - logits64).abs().max())
    return out


def fixture_list(args):
    """(name, family, config) for every fixture."""
    out = []
    base = dict(sequence_len=SEQUENCE_LEN, num_unique_tokens=VOCAB, num_layers=args.layers,
                ff_mult=args.ff_mult, ff_dropout=0.0, attn_dropout=0.0, causal=True)
    for dim, heads, fams in ((32, 2, list(FAMILIES)), (64, 4, args.wide.split(",") if args.wide else [])):
        for fam in fams:
            if fam not in FAMILIES:
                raise SystemExit(f"unknown family {fam!r} in --wide")
            cfg = dict(base, dim=dim, heads=heads, **FAMILY_KWARGS[fam])
            out.append((f"{fam}_d{dim}h{heads}", fam, cfg))
    return out


def write_fixture(path, tensors, metadata, compress):
    # safetensors.numpy.save writes a non-C-contiguous array's raw buffer in memory order
    # (seen with safetensors 0.8.0), so make every array C-contiguous first.
    tensors = {k: np.ascontiguousarray(v) for k, v in tensors.items()}
    data = st_save(tensors, metadata=metadata)
    # The Rust writer emits __metadata__ in hash-map (random) order; re-emit the JSON header
    # with sorted keys so that regenerating gives byte-identical files. Offsets are relative
    # to the data section, so only the header changes; it stays padded to a multiple of 8.
    n = int.from_bytes(data[:8], "little")
    header = json.dumps(json.loads(data[8:8 + n]), sort_keys=True, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    data = len(header).to_bytes(8, "little") + header + data[8 + n:]
    if compress:
        buf = io.BytesIO()
        # mtime=0 and no file name: the output depends only on the content.
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
            gz.write(data)
        data = buf.getvalue()
        path += ".gz"
    with open(path, "wb") as f:
        f.write(data)
    return path, len(data)


def read_fixture(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    tensors = st_load(data)
    # The header: 8-byte little-endian length, then JSON.
    n = int.from_bytes(data[:8], "little")
    metadata = json.loads(data[8:8 + n]).get("__metadata__", {})
    return tensors, metadata


def verify(path, family, authors_class):
    """Loads a fixture back and rebuilds the authors' model from it; returns max |logit diff|, |loss diff|."""
    tensors, meta = read_fixture(path)
    assert meta["family"] == family and meta["authors_class"] == authors_class
    config = json.loads(meta["config"])
    model = import_family(family)(**config)
    sd = model.state_dict()
    missing = set(sd) - set(tensors)
    assert not missing, f"{path}: state_dict entries missing: {missing}"
    model = model.double().eval()
    model.load_state_dict({k: torch.from_numpy(tensors[k].astype(np.float64)) for k in sd}, strict=True)
    clear_rotary_caches(model)
    logits, loss = run(model, family, config, tensors["tokens"])
    pos = tensors["logit_positions"].astype(np.int64)
    got = logits.numpy()[:, pos, :].astype(np.float32)
    want = tensors["logits"]
    assert want.dtype == np.float32 and got.shape == want.shape
    return float(np.max(np.abs(got - want))), abs(float(loss) - float(meta["loss"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--authors", required=True, help="checkout of MetaMain/ECPTransformer at 9fbf532")
    ap.add_argument("--out", required=True, help="output directory, e.g. models/testdata/golden")
    ap.add_argument("--seed", type=int, default=20241208)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--ff-mult", type=int, default=2,
                    help="feed-forward multiplier (4 would be the authors' default; 2 keeps the fixtures small)")
    ap.add_argument("--sig-bits", type=int, default=6,
                    help="significant bits of every parameter value (11 = plain float16); fewer bits compress better")
    ap.add_argument("--logit-stride", type=int, default=2,
                    help="store logits of target positions 0, s, 2s, ... (the loss always covers all)")
    ap.add_argument("--wide", default="ecp",
                    help="families also written at dim=64, heads=4 (comma-separated)")
    ap.add_argument("--no-gzip", action="store_true", help="write .safetensors instead of .safetensors.gz")
    ap.add_argument("--force", action="store_true", help="run even if the authors' files differ from 9fbf532")
    args = ap.parse_args()

    torch.set_num_threads(1)  # reproducible reductions
    authors = os.path.realpath(args.authors)
    status = check_authors(authors)
    if status.startswith("MISMATCH"):
        if not args.force:
            raise SystemExit(f"--authors {authors}: {status} (use --force to go on anyway)")
        warnings.warn(f"--authors {authors}: {status}")
    elif "expected" in status:
        print(f"WARNING: {status}", file=sys.stderr)
    else:
        print(f"authors checkout: {status}")
    sys.path.insert(0, authors)

    os.makedirs(args.out, exist_ok=True)
    total = 0
    summary, sensitivity = [], []
    for index, (name, family, config) in enumerate(fixture_list(args)):
        module, cls = FAMILIES[family]
        seed = args.seed + index
        rng = np.random.default_rng(seed)
        L = latent_len_of(family, config)
        n = config["sequence_len"]
        probe = import_family(family)(**config)
        values = init_parameters(probe, rng, args.sig_bits)
        tokens = rng.integers(0, VOCAB, size=(args.batch, n + 1)).astype(np.int32)

        model64 = build(family, config, values, torch.float64)
        logits64, loss64 = run(model64, family, config, tokens)
        unused = unused_parameters(model64, family, config, tokens)
        model32 = build(family, config, values, torch.float32)
        logits32, loss32 = run(model32, family, config, tokens)
        f32_gap = float((logits32.double() - logits64).abs().max())

        positions = np.arange(0, L, args.logit_stride, dtype=np.int32)
        tensors = {}
        for key, value in model64.state_dict().items():
            if key in values:
                tensors[key] = values[key]  # float16, exactly what the model ran on
            else:
                tensors[key] = value.detach().to(torch.float32).numpy().copy()  # buffers: RoPE freqs
        tensors["tokens"] = tokens
        tensors["logits"] = logits64.numpy()[:, positions, :].astype(np.float32)
        tensors["logit_positions"] = positions
        metadata = {
            "family": family,
            "authors_class": cls,
            "authors_module": module,
            "authors_commit": AUTHORS_COMMIT,
            "config": json.dumps(config, sort_keys=True),
            "latent_len": str(L),
            "batch": str(args.batch),
            "loss": repr(float(loss64)),
            "loss_float32_run": repr(float(loss32)),
            "logits_max_abs_diff_float32_run": repr(f32_gap),
            "compute_dtype": "float64 (parameters and activations); logits stored rounded to float32",
            "logit_positions": f"every {args.logit_stride}th target position (tensor logit_positions, 0-based in the "
                               f"window of the last {L}): logits[b, k, :] = model(tokens[:, :-1])[b, {n - L} + "
                               f"logit_positions[k], :]; the loss covers all {L} target positions",
            "unused_parameters": json.dumps(unused),
            "weights_dtype": "float16",
            "weights_grid": f"every parameter rounded to {args.sig_bits} significant bits (exact in float16)",
            "buffers_dtype": "float32 (RotaryEmbedding freqs)",
            "seed": str(seed),
            "torch_version": torch.__version__,
        }
        path, size = write_fixture(os.path.join(args.out, name + ".safetensors"), tensors, metadata,
                                   not args.no_gzip)
        total += size
        dlogit, dloss = verify(path, family, cls)
        assert dlogit == 0.0 and dloss == 0.0, (name, dlogit, dloss)
        summary.append((os.path.basename(path), size, float(loss64), float(logits64.abs().max()), f32_gap, unused))
        sensitivity.append((name, sensitivities(family, config, values, tokens, logits64)))

    for fname, size, loss, maxlogit, gap, unused in summary:
        print(f"{fname:40s} {size / 1024:7.1f} KiB  loss {loss!r:22s} max|logit| {maxlogit:6.3f}  "
              f"f32-vs-f64 {gap:.1e}  unused {len(unused)}")
    print("how far the stored logits move under a wrong detail (max |diff|; a Go check must fail on these):")
    for name, figures in sensitivity:
        print(f"  {name:18s} " + "  ".join(f"{k}: {v:.3g}" for k, v in figures.items()))
    print(f"total {total} bytes ({total / 1024:.1f} KiB) in {len(summary)} files")


if __name__ == "__main__":
    main()
