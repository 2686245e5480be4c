"""PyTorch twins of the language models `ecpi bench train` trains
(models/lm.go, ecp.go, local.go, pi.go, full.go; train/bench.go, train/optimizer.go).

- pre-LN blocks: x + attention(LN(x)), then x + FF(LN(x)); FF d -> 4d -> d with
  exact GELU; LayerNorm ε = 1e-5; final LayerNorm; logits Linear(d, 256) with
  bias (not tied); token embedding N(0, 1); no positional embedding (RoPE);
- dropout 0.05 on the attention probabilities and on the FF hidden layer;
- local, full: q, k, v projections without bias, RoPE (interleaved pairs,
  θ = 10000) on q and k in every layer, output projection with bias;
- ecp: one shared key/value projection, RoPE on q and on k/v (values rotated
  too) in layer 0 only, output projection `output_first` for the first
  half-segment and `output_rest` for the rest;
- pi: q, k, v as local plus the gate MLP d -> max(d/4, H) (bias, GELU) -> H
  (bias, sigmoid), one α per token and head, prior fusion;
- AdamW lr 3e-4, betas (0.9, 0.95), ε 1e-8, weight decay 0.1 on weight
  matrices only (not embeddings, norms, biases), global-norm clipping at 1.0.
Weights are initialised as PyTorch's defaults, which ecpi copies.
"""

import gzip
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import patterns

FAMILIES = ("ecp", "local", "pi", "full")

# The small model is train/bench.go's BenchConfig; the large one is this
# peer's choice for issue 12's "larger model" (ecpi has no size option yet).
SIZES = {
    "small": dict(n=256, dim=64, heads=4, layers=2, window=32, batch=8),
    "large": dict(n=1024, dim=256, heads=4, layers=4, window=128, batch=8),
}


class Config:
    def __init__(self, family, n, dim, heads, layers, window, batch, dropout=0.05, ff_mult=4, vocab=256, theta=10000.0):
        self.family, self.n, self.dim, self.heads, self.layers = family, n, dim, heads, layers
        self.window, self.batch, self.dropout, self.ff_mult = window, batch, dropout, ff_mult
        self.vocab, self.theta = vocab, theta

    @classmethod
    def of(cls, family, size):
        return cls(family, **SIZES[size])

    @property
    def head_dim(self):
        return self.dim // self.heads

    def pattern(self, impl):
        """Each layer's pattern (the family's BenchWindow sets window/half-segment)."""
        if self.family == "full":
            return patterns.SDPA() if impl == "sdpa" else patterns.Full()
        if self.family == "local":
            return patterns.Local(self.window)
        if self.family == "ecp":
            return patterns.ECP(self.window)
        if self.family == "pi":
            return patterns.Pi.for_length(self.window, self.n)
        raise ValueError(f"unknown family {self.family!r}")


class Rotary(nn.Module):
    """RoPE with interleaved pairs (2p, 2p+1) over the whole head (models/rope.go)."""

    def __init__(self, n, head_dim, theta):
        super().__init__()
        freqs = theta ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
        angles = torch.arange(n, dtype=torch.float64).view(n, 1) * freqs
        self.register_buffer("cos", angles.cos().float(), persistent=False)
        self.register_buffer("sin", angles.sin().float(), persistent=False)

    def forward(self, x):  # [B, H, n, dh]
        pairs = x.unflatten(-1, (-1, 2))
        even, odd = pairs[..., 0], pairs[..., 1]
        cos, sin = self.cos.to(x.dtype), self.sin.to(x.dtype)
        return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


class Attention(nn.Module):
    """StandardAttention (local, full) and, with gate=True, π's gatedAttention."""

    def __init__(self, c, pattern, rope, impl, gate=False):
        super().__init__()
        self.c, self.pattern, self.rope, self.impl = c, pattern, rope, impl
        self.query = nn.Linear(c.dim, c.dim, bias=False)
        self.key = nn.Linear(c.dim, c.dim, bias=False)
        self.value = nn.Linear(c.dim, c.dim, bias=False)
        self.output = nn.Linear(c.dim, c.dim)
        if gate:
            hidden = max(c.dim // 4, c.heads)
            self.gate_hidden = nn.Linear(c.dim, hidden)
            self.gate_alpha = nn.Linear(hidden, c.heads)
        self.gate = gate

    def heads(self, x):
        return x.unflatten(-1, (self.c.heads, -1)).transpose(1, 2)

    def forward(self, x):
        q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
        if self.rope is not None:
            q, k = self.rope(q), self.rope(k)
        alpha = None
        if self.gate:
            alpha = torch.sigmoid(self.gate_alpha(F.gelu(self.gate_hidden(x)))).transpose(1, 2)  # [B, H, n]
        drop = self.c.dropout if self.training else 0.0
        out = self.pattern.attend(q, k, v, drop=drop, impl=self.impl, alpha=alpha)
        return self.output(out.transpose(1, 2).flatten(2))


class ECPAttention(nn.Module):
    """ecpAttention: shared key/value projection, two output projections."""

    def __init__(self, c, pattern, rope, impl):
        super().__init__()
        self.c, self.pattern, self.rope, self.impl = c, pattern, rope, impl
        self.query = nn.Linear(c.dim, c.dim, bias=False)
        self.key_value = nn.Linear(c.dim, c.dim, bias=False)
        self.output_first = nn.Linear(c.dim, c.dim)
        self.output_rest = nn.Linear(c.dim, c.dim)

    def forward(self, x):
        split = lambda t: t.unflatten(-1, (self.c.heads, -1)).transpose(1, 2)
        q, kv = split(self.query(x)), split(self.key_value(x))
        if self.rope is not None:
            q, kv = self.rope(q), self.rope(kv)
        drop = self.c.dropout if self.training else 0.0
        out = self.pattern.attend(q, kv, kv, drop=drop, impl=self.impl).transpose(1, 2).flatten(2)
        h = self.pattern.h
        first = self.output_first(out[:, :h])
        if out.shape[1] == h:
            return first
        return torch.cat([first, self.output_rest(out[:, h:])], dim=1)


class Block(nn.Module):
    def __init__(self, c, index, rope, impl):
        super().__init__()
        self.c = c
        self.attention_norm = nn.LayerNorm(c.dim, eps=1e-5)
        pattern = c.pattern(impl)
        if c.family == "ecp":
            self.attention = ECPAttention(c, pattern, rope if index == 0 else None, impl)
        else:
            self.attention = Attention(c, pattern, rope, impl, gate=(c.family == "pi"))
        self.ff_norm = nn.LayerNorm(c.dim, eps=1e-5)
        self.ff_in = nn.Linear(c.dim, c.ff_mult * c.dim)
        self.ff_out = nn.Linear(c.ff_mult * c.dim, c.dim)

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        hidden = F.dropout(F.gelu(self.ff_in(self.ff_norm(x))), self.c.dropout, self.training)
        return x + self.ff_out(hidden)


class LM(nn.Module):
    """Tokens [B, n] -> next-token logits [B, n, 256]."""

    def __init__(self, c, impl="matmul"):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab, c.dim)  # N(0, 1), as nn.Embedding and ecpi
        rope = Rotary(c.n, c.head_dim, c.theta)
        self.layers = nn.ModuleList(Block(c, i, rope, impl) for i in range(c.layers))
        self.final_norm = nn.LayerNorm(c.dim, eps=1e-5)
        self.logits = nn.Linear(c.dim, c.vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.logits(self.final_norm(x))


def default_impl(family):
    """The attention implementation the twins train with: PyTorch's fused SDPA
    where one softmax covers a block (full: is_causal over the sequence; local,
    ecp: per block with the additive mask), the matmul block form for π."""
    return "matmul" if family == "pi" else "sdpa"


def optimizer(model, lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1):
    """AdamW with decay on weight matrices of linear layers only (train/optimizer.go decays)."""
    decay, rest = [], []
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            (decay if isinstance(module, nn.Linear) and name == "weight" else rest).append(p)
    groups = [dict(params=decay, weight_decay=weight_decay), dict(params=rest, weight_decay=0.0)]
    try:
        return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=1e-8, fused=True), "fused"
    except (RuntimeError, TypeError):
        return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=1e-8, foreach=True), "foreach"


def matmul_params(model):
    """Parameters that take part in matrix products (every nn.Linear weight)."""
    return sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))


def flops_per_step(c, model):
    """6·P·tokens (forward + backward of the linear layers) plus the attention
    term 3 · 4·dh·H·pairs · B per layer (q·k and weights·v, multiply-add = 2;
    pairs = the scores the family's block form computes, ecpi's `cost` convention)."""
    tokens = c.batch * c.n
    pairs = c.pattern("matmul").scored_pairs(c.n)
    attention = 3 * 4 * c.head_dim * c.heads * pairs * c.batch * c.layers
    return 6 * matmul_params(model) * tokens + attention


# ---------------------------------------------------------------------------
# Self-test: the ECP twin against ecpi's golden fixture (the authors' model)
# ---------------------------------------------------------------------------

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "models", "testdata", "golden", "ecp_d64h4.safetensors.gz")
DTYPES = {"F16": np.float16, "F32": np.float32, "I32": np.int32, "F64": np.float64}


def read_safetensors_gz(path):
    """A gzip'd safetensors file as ({name: numpy array}, metadata), no extra package."""
    raw = gzip.open(path).read()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + size])
    base, tensors = 8 + size, {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        tensors[name] = np.frombuffer(raw[base + lo:base + hi], dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
    return tensors, header.get("__metadata__", {})


def load_golden(model, tensors):
    """Maps the authors' parameter names (tests/reference/README.md) onto the twin."""
    t = lambda name: torch.from_numpy(tensors[name].astype(np.float64))
    with torch.no_grad():
        model.embed.weight.copy_(t("token_emb.weight"))
        for i, layer in enumerate(model.layers):
            p = f"layers.{i}."
            pairs = [(layer.attention_norm, p + "0.norm"), (layer.ff_norm, p + "1.norm"),
                     (layer.attention.output_first, p + "0.fn.to_out_0"), (layer.attention.output_rest, p + "0.fn.to_out"),
                     (layer.ff_in, p + "1.fn.net.0"), (layer.ff_out, p + "1.fn.net.3")]
            for module, name in pairs:
                module.weight.copy_(t(name + ".weight"))
                module.bias.copy_(t(name + ".bias"))
            layer.attention.query.weight.copy_(t(p + "0.fn.to_q.weight"))
            layer.attention.key_value.weight.copy_(t(p + "0.fn.to_kv.weight"))
        model.final_norm.weight.copy_(t("to_logits.0.weight"))
        model.final_norm.bias.copy_(t("to_logits.0.bias"))
        model.logits.weight.copy_(t("to_logits.1.weight"))
        model.logits.bias.copy_(t("to_logits.1.bias"))


def selftest(say=lambda ok, line: print(line)):
    ok = True
    if os.path.exists(GOLDEN):
        tensors, meta = read_safetensors_gz(GOLDEN)
        cfg = json.loads(meta["config"])
        n, layers, dim, heads = cfg["sequence_len"], cfg["num_layers"], cfg["dim"], cfg["heads"]
        c = Config("ecp", n=n, dim=dim, heads=heads, layers=layers, window=n // cfg["num_segments"], batch=2,
                   dropout=0.0, ff_mult=cfg["ff_mult"])
        for impl in ("matmul", "sdpa"):
            model = LM(c, impl).double().eval()
            load_golden(model, tensors)
            tokens = torch.from_numpy(tensors["tokens"].astype(np.int64))
            logits = model(tokens[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten()).item()
            positions = torch.from_numpy(tensors["logit_positions"].astype(np.int64))
            want = torch.from_numpy(tensors["logits"].astype(np.float64))
            err = (logits[:, positions] - want).abs().max().item()
            good = err <= 1e-4 and abs(loss - float(meta["loss"])) <= 1e-5
            ok &= good
            say(good, f"{'ok ' if good else 'BAD'} ECP twin vs the authors' golden logits ({os.path.basename(GOLDEN)}, impl={impl}): "
                  f"max|Δ logit| {err:.1e}, |Δ loss| {abs(loss - float(meta['loss'])):.1e}")
    else:
        print(f"skip golden check: {GOLDEN} not found")
    for family in FAMILIES:  # every twin trains a step at a toy size
        c = Config(family, n=64, dim=32, heads=4, layers=2, window=8, batch=2)
        model = LM(c, default_impl(family))
        opt, _ = optimizer(model)
        tokens = torch.randint(0, 256, (2, 65))
        loss = F.cross_entropy(model(tokens[:, :-1]).flatten(0, 1), tokens[:, 1:].flatten())
        loss.backward()
        opt.step()
        good = math.isfinite(loss.item()) and abs(loss.item() - math.log(256)) < 3
        ok &= good
        say(good, f"{'ok ' if good else 'BAD'} {family} twin trains a step (loss {loss.item():.2f}, {matmul_params(model)} matmul params)")
    return ok
