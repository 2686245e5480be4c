"""PyTorch twins of ecpi's attention patterns, in ecpi's block forms.

Each class mirrors one pattern of ecpi's models/ (the file is named in its
docstring): the same blocks, the same neighbour pairing, the same masks inside
the blocks, the same padding. docs/attention-variants.md defines every index
set K(i); `allows` below is that definition as a dense [H, n, n] mask, used
only by the self-test (selftest.py), which checks each block form against it.

Tensors are [B, H, n, dh] throughout, as in ecpi. Two ways of computing a
block form's attention are offered where one softmax covers a block's keys:

- impl="matmul": the op-for-op twin of ecpi (scores = q·kᵀ per block, additive
  -1e9 outside K(i), softmax, weights·v), what ecpi's graph does;
- impl="sdpa": the same blocks handed to F.scaled_dot_product_attention with the
  additive mask, PyTorch's fused CPU kernel (a user's natural choice).

π-Attention's prior fusion concatenates two block forms per query and has no
single-softmax block, so it is matmul only.

Masks depend only on the shape, so they are built once per (pattern, n) and
cached (ecpi builds them in the graph from iotas; XLA folds them to constants).
"""

import math

import torch
import torch.nn.functional as F

NEG = -1e9  # ecpi's additive mask value (models/blocks.go softmaxWithin)
IMPLS = ("matmul", "sdpa")


# ---------------------------------------------------------------------------
# The shared block form (models/blocks.go)
# ---------------------------------------------------------------------------


class BlockSpec:
    """Which key blocks a query block scores (models/blocks.go blockSpec)."""

    def __init__(self, size, before=0, after=0, shift=0):
        self.size, self.before, self.after, self.shift = size, before, after, shift

    @property
    def keys(self):
        return (self.before + 1 + self.after) * self.size

    def num_blocks(self, n):
        return -(-(n + self.shift) // self.size)

    def scored_pairs(self, n):
        return self.num_blocks(n) * self.size * self.keys

    def positions(self, n):
        """Positions of query rows [nb, size, 1] and key slots [nb, 1, keys]."""
        nb = self.num_blocks(n)
        start = torch.arange(nb).view(nb, 1, 1) * self.size
        query = start + torch.arange(self.size).view(1, self.size, 1) - self.shift
        key = start + torch.arange(self.keys).view(1, 1, self.keys) - self.shift - self.before * self.size
        return query, key


MIN_WINDOW_BLOCK = 64  # models/blocks.go minWindowBlock


def window_spec(window):
    """A causal window of k keys in blocks of s >= 64 positions (k if smaller),
    each seeing the ceil(k/s) blocks before it (models/blocks.go windowSpec)."""
    size = -(-window // max(1, window // MIN_WINDOW_BLOCK))
    return BlockSpec(size, before=-(-window // size))


def within(position, n):
    return (position >= 0) & (position < n)


def pad_seq(x, dim, front, back):
    """Zero padding of `front` and `back` entries along dim."""
    if front == 0 and back == 0:
        return x
    trailing = x.dim() - 1 - dim
    return F.pad(x, (0, 0) * trailing + (front, back))


def to_blocks(x, spec):
    """[B, H, n, d] -> [B, H, nb, size, d], padded (shift in front, zeros behind)."""
    b, h, n, d = x.shape
    nb = spec.num_blocks(n)
    x = pad_seq(x, 2, spec.shift, nb * spec.size - n - spec.shift)
    return x.reshape(b, h, nb, spec.size, d)


def neighbour_blocks(blocks, spec):
    """[B, H, nb, size, d] -> [B, H, nb, keys, d]: `before` previous blocks, itself, `after` next."""
    nb = blocks.shape[2]
    padded = pad_seq(blocks, 2, spec.before, spec.after)
    parts = [padded[:, :, o:o + nb] for o in range(spec.before + 1 + spec.after)]
    return parts[0] if len(parts) == 1 else torch.cat(parts, dim=3)


def from_blocks(x, spec, n):
    """[B, H, nb, size, d] -> [B, H, n, d], undoing to_blocks."""
    b, h, nb, size, d = x.shape
    return x.reshape(b, h, nb * size, d)[:, :, spec.shift:spec.shift + n]


def bias_of(mask):
    """Boolean mask -> additive bias (0 inside K(i), -1e9 outside)."""
    return torch.zeros(mask.shape).masked_fill_(~mask, NEG)


class Blocked:
    """One block form: query blocks, neighbour key/value blocks, mask bias
    (models/blocks.go blockScores). q is scaled by 1/√dh as in ecpi."""

    def __init__(self, q, k, v, spec, bias):
        self.spec, self.n = spec, q.shape[2]
        self.dh = q.shape[3]
        self.q = to_blocks(q, spec)
        self.k = neighbour_blocks(to_blocks(k, spec), spec)
        self.v = neighbour_blocks(to_blocks(v, spec), spec)
        self.bias = bias  # broadcastable to [B, H, nb, size, keys]

    def scores(self):
        return torch.matmul(self.q * (1 / math.sqrt(self.dh)), self.k.transpose(-1, -2))

    def weigh(self, weights):
        return from_blocks(torch.matmul(weights, self.v), self.spec, self.n)

    def per_query(self, x):
        """[B, H, nb, size, keys] -> [B, H, n, keys] (models/strided.go blocked.perQuery)."""
        x = x.reshape(*x.shape[:2], -1, x.shape[-1])
        return x[:, :, self.spec.shift:self.spec.shift + self.n]

    def from_per_query(self, x, like):
        b, h, nb, size, keys = like.shape
        x = pad_seq(x, 2, self.spec.shift, nb * size - x.shape[2] - self.spec.shift)
        return x.reshape(b, h, nb, size, keys)

    def attend(self, drop=0.0, impl="matmul"):
        if impl == "sdpa":
            bias = self.bias.to(self.q.dtype)
            out = F.scaled_dot_product_attention(self.q, self.k, self.v, attn_mask=bias, dropout_p=drop)
            return from_blocks(out, self.spec, self.n)
        weights = torch.softmax(self.scores() + self.bias, dim=-1)
        if drop:
            weights = F.dropout(weights, drop)
        return self.weigh(weights)


_CACHE = {}


def cached(key, build):
    """Masks and tables, built once per shape (see the module docstring). A
    plain dict: run the pattern once eagerly before torch.compile, and Dynamo
    sees the cached tensors as constants."""
    if key not in _CACHE:
        _CACHE[key] = build()
    return _CACHE[key]


class Pattern:
    """A block-form attention. Subclasses set name and implement attend/allows."""

    name = "?"
    impls = ("matmul",)

    def attend(self, q, k, v, drop=0.0, impl="matmul", alpha=None):
        raise NotImplementedError

    def allows(self, heads, n):
        """K(i) as a dense bool [H or 1, n, n] (reference only)."""
        raise NotImplementedError

    def scored_pairs(self, n):
        raise NotImplementedError


def _dense_positions(n):
    i = torch.arange(n).view(n, 1)
    j = torch.arange(n).view(1, n)
    return i, j


# ---------------------------------------------------------------------------
# Full attention (models/full.go) and PyTorch's fused causal kernel
# ---------------------------------------------------------------------------


class Full(Pattern):
    """ecpi's dense attention: one block covering the sequence, causal mask."""

    name = "full"
    impls = IMPLS

    def attend(self, q, k, v, drop=0.0, impl="matmul", alpha=None):
        n = q.shape[2]
        spec = BlockSpec(n)
        bias = cached(("full", n), lambda: bias_of(self._mask(*spec.positions(n))))
        return Blocked(q, k, v, spec, bias).attend(drop, impl)

    @staticmethod
    def _mask(query, key):
        return key <= query

    def allows(self, heads, n):
        i, j = _dense_positions(n)
        return (j <= i).unsqueeze(0)

    def scored_pairs(self, n):
        return n * n


class SDPA(Full):
    """F.scaled_dot_product_attention(is_causal=True): the dense baseline a
    PyTorch user would pick (flash-style CPU kernel, no n x n mask)."""

    name = "sdpa"
    impls = ("sdpa",)

    def attend(self, q, k, v, drop=0.0, impl="sdpa", alpha=None):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=drop)


# ---------------------------------------------------------------------------
# Local window, ECP, S2 (models/local.go, ecp.go, s2.go)
# ---------------------------------------------------------------------------


class _OneBlockForm(Pattern):
    """A pattern that is one block form with a mask of (query, key) positions."""

    impls = IMPLS

    def spec(self):
        """Blocks of the half-segment, each with the previous block."""
        return BlockSpec(self.block, before=1)

    def mask(self, query, key):
        raise NotImplementedError

    def bias(self, spec, n):
        def build():
            query, key = spec.positions(n)
            return bias_of(within(query, n) & within(key, n) & self.mask(query, key))
        return cached((self.name, repr(vars(self)), spec.shift, n), build)

    def attend(self, q, k, v, drop=0.0, impl="matmul", alpha=None):
        spec = self.spec()
        return Blocked(q, k, v, spec, self.bias(spec, q.shape[2])).attend(drop, impl)

    def scored_pairs(self, n):
        return self.spec().scored_pairs(n)


class Local(_OneBlockForm):
    """Causal sliding window i-k <= j <= i, blocked by window_spec."""

    name = "local"

    def __init__(self, window):
        self.window = window

    def spec(self):
        return window_spec(self.window)

    def mask(self, query, key):
        distance = query - key
        return (distance.abs() <= self.window) & (distance >= 0)

    def allows(self, heads, n):
        i, j = _dense_positions(n)
        return ((j <= i) & (i - j <= self.window)).unsqueeze(0)


class ECP(_OneBlockForm):
    """Half-segments of h: a query sees its own half causally and the previous one whole."""

    name = "ecp"

    def __init__(self, half_segment):
        self.h = self.block = half_segment

    def mask(self, query, key):
        # Padding keys (negative positions) are masked by `within`, so floor
        # division here agrees with Go's truncating division where it matters.
        return (key <= query) & (torch.div(key, self.h, rounding_mode="floor") >= query // self.h - 1)

    def allows(self, heads, n):
        i, j = _dense_positions(n)
        return ((j <= i) & ((j // self.h == i // self.h) | (j // self.h == i // self.h - 1))).unsqueeze(0)


class S2(Pattern):
    """LongLoRA S2: groups of G, heads >= H/2 in groups shifted by G/2 (no wrap-around).

    impl "matmul"/"sdpa" is ecpi's block form: ECP's blocks of G/2, each with
    the block before, for every head at once, and a mask with a head axis
    keeping each head's own group. impl "groups" is the form ecpi used before
    (one G x G causal block per group, the shifted heads padded by G/2 in
    front), kept so that PyTorch's best includes whichever form suits it."""

    name = "s2"
    impls = IMPLS + ("groups",)

    def __init__(self, group, heads):
        self.group, self.heads = group, heads

    def spec(self):
        return BlockSpec(self.group // 2, before=1)

    def _shifts(self):
        """G/2 for the shifted heads, 0 for the plain ones: [H, 1, 1, 1]."""
        return torch.tensor([self.group // 2 if h >= self.heads // 2 else 0 for h in range(self.heads)]).view(-1, 1, 1, 1)

    def _bias(self, n):
        def build():
            query, key = self.spec().positions(n)
            shift = self._shifts()
            same = torch.div(key + shift, self.group, rounding_mode="floor") == torch.div(query + shift, self.group, rounding_mode="floor")
            return bias_of(within(query, n) & within(key, n) & (key <= query) & same)
        return cached(("s2", self.group, self.heads, n), build)

    def attend(self, q, k, v, drop=0.0, impl="matmul", alpha=None):
        if impl == "groups":
            return self._attend_groups(q, k, v, drop)
        return Blocked(q, k, v, self.spec(), self._bias(q.shape[2])).attend(drop, impl)

    def _group_spec(self, shifted):
        return BlockSpec(self.group, shift=self.group // 2 if shifted else 0)

    def _group_bias(self, spec, n):
        def build():
            query, key = spec.positions(n)
            return bias_of(within(query, n) & within(key, n) & (key <= query))
        return cached(("s2 groups", self.group, spec.shift, n), build)

    def _attend_groups(self, q, k, v, drop):
        n, plain = q.shape[2], self.heads // 2
        outs = []
        for lo, hi, shifted in ((0, plain, False), (plain, self.heads, True)):
            if hi > lo:
                spec = self._group_spec(shifted)
                outs.append(Blocked(q[:, lo:hi], k[:, lo:hi], v[:, lo:hi], spec, self._group_bias(spec, n)).attend(drop))
        return outs[0] if len(outs) == 1 else torch.cat(outs, dim=1)

    def allows(self, heads, n):
        i, j = _dense_positions(n)
        g, half = self.group, self.group // 2
        plain = (j <= i) & (j // g == i // g)
        shifted = (j <= i) & ((j + half) // g == (i + half) // g)
        return torch.stack([plain if h < heads // 2 else shifted for h in range(heads)])

    def scored_pairs(self, n):
        return self.spec().scored_pairs(n)


# ---------------------------------------------------------------------------
# The strided view (models/strided.go), for π's skips and dilated windows
# ---------------------------------------------------------------------------


class Strided:
    """Rows of `period` positions, transposed: channel (h, c) holds positions
    c, c+period, ...; key i - m·period is m rows above query i. No head phase
    (ecpi's default head_phase=false), so no per-head delay."""

    def __init__(self, n, period):
        self.n, self.period = n, period
        self.rows = -(-n // period)

    def view(self, x):
        b, h, n, d = x.shape
        x = pad_seq(x, 2, 0, self.rows * self.period - n)
        x = x.reshape(b, h, self.rows, self.period, d).transpose(2, 3)
        return x.reshape(b, h * self.period, self.rows, d)

    def per_query(self, x):
        """Block-form scores of the view [B, H·P, nb, size, keys] -> [B, H, n, keys]."""
        b, hp, nb, size, keys = x.shape
        heads = hp // self.period
        x = x.reshape(b, heads, self.period, nb * size, keys)[:, :, :, :self.rows]
        x = x.transpose(2, 3).reshape(b, heads, self.rows * self.period, keys)
        return x[:, :, :self.n]

    def to_blocks(self, x, like):
        """Inverse of per_query: [B, H, n, keys] -> like's [B, H·P, nb, size, keys]."""
        b, h, _, keys = x.shape
        nb, size = like.shape[2], like.shape[3]
        x = pad_seq(x, 2, 0, self.rows * self.period - self.n)
        x = x.reshape(b, h, self.rows, self.period, keys).transpose(2, 3)
        x = pad_seq(x, 3, 0, nb * size - self.rows)
        return x.reshape(b, h * self.period, nb, size, keys)

    def output(self, blocked, weights):
        """Weights of the view -> [B, H, n, d] in sequence order."""
        view = blocked.weigh(weights)  # [B, H·P, rows, d]
        b, hp, rows, d = view.shape
        x = view.reshape(b, hp // self.period, self.period, rows, d).transpose(2, 3)
        return x.reshape(b, hp // self.period, rows * self.period, d)[:, :, :self.n]

    def positions(self, query_row, key_row):
        """Sequence positions of a view's block-form rows, per channel c: [P, ...]."""
        column = torch.arange(self.period).view(self.period, 1, 1, 1)
        return query_row * self.period + column, key_row * self.period + column


def strided_rows(n, period, spec):
    """A block form along the rows of the strided view: the view, the distance
    in rows (query row - key row) and whether both ends are real positions."""
    view = Strided(n, period)
    query_row, key_row = spec.positions(view.rows)
    query, key = view.positions(query_row, key_row)
    valid = within(query_row, view.rows) & within(key_row, view.rows) & within(query, n) & within(key, n)
    return view, query_row - key_row, query - key, valid


def _view_as_blocks_mask(mask):
    """A view mask [P, nb, size, keys] as [1, P, nb, size, keys] (one head's channels)."""
    return mask.unsqueeze(0)


# ---------------------------------------------------------------------------
# π-Attention (models/pi.go), prior fusion
# ---------------------------------------------------------------------------


class Pi(Pattern):
    """Ring-local window k plus skips i - m·π (m = 1..M), one softmax over both
    with log α on local keys and log(1-α) on skip keys (fusion=prior); α = 1/2
    without a gate (what `bench attention` times)."""

    name = "pi"

    def __init__(self, window, period, skips):
        self.window, self.period, self.skips = window, period, skips
        self.local = Local(window)

    @classmethod
    def for_length(cls, window, n):
        """ecpi's defaults: π = 2k, M = max(1, min(k, (n-1)/π))."""
        period = 2 * window
        return cls(window, period, max(1, min(window, (n - 1) // period)))

    def skip_spec(self):
        return BlockSpec(self.skips, before=1)

    def _skip_mask(self, n):
        def build():
            _, back, distance, valid = strided_rows(n, self.period, self.skip_spec())
            return _view_as_blocks_mask(valid & (back >= 1) & (back <= self.skips) & (distance > self.window))
        return cached(("pi-skip", self.window, self.period, self.skips, n), build)

    def attend(self, q, k, v, drop=0.0, impl="matmul", alpha=None):
        n = q.shape[2]
        lspec = self.local.spec()
        local = Blocked(q, k, v, lspec, self.local.bias(lspec, n))
        view = Strided(n, self.period)
        skip = Blocked(view.view(q), view.view(k), view.view(v), self.skip_spec(), None)
        local_scores = local.scores()
        skip_scores = skip.scores()
        skip_mask = self._skip_mask(n)
        local_q = local.per_query(local_scores)
        skip_q = view.per_query(skip_scores)
        local_bias = local.per_query(local.bias.expand(1, 1, *local.bias.shape))
        skip_bias = cached(("pi-skip-bias", self.window, self.period, self.skips, n),
                           lambda: bias_of(view.per_query(skip_mask)))
        if alpha is None:
            local_prior = skip_prior = torch.tensor(math.log(0.5))
        else:
            a = alpha.unsqueeze(-1)  # [B, H, n, 1]
            local_prior, skip_prior = torch.log(a), torch.log1p(-a)
        logits = torch.cat([local_q + local_prior + local_bias, skip_q + skip_prior + skip_bias], dim=-1)
        weights = torch.softmax(logits, dim=-1)
        keys = local_q.shape[-1]
        local_w, skip_w = weights[..., :keys], weights[..., keys:]
        if drop:
            local_w, skip_w = F.dropout(local_w, drop), F.dropout(skip_w, drop)
        local_out = local.weigh(local.from_per_query(local_w, local_scores))
        skip_out = view.output(skip, view.to_blocks(skip_w, skip_scores))
        return local_out + skip_out

    def is_skip(self, n):
        i, j = _dense_positions(n)
        d = i - j
        return (d > self.window) & (d % self.period == 0) & (d // self.period <= self.skips)

    def allows(self, heads, n):
        return self.local.allows(heads, n) | self.is_skip(n).unsqueeze(0)

    def scored_pairs(self, n):
        rows = Strided(n, self.period).rows
        return self.local.scored_pairs(n) + self.period * self.skip_spec().scored_pairs(rows)


# ---------------------------------------------------------------------------
# Longformer (models/longformer.go), causal, one dilation for every head
# ---------------------------------------------------------------------------


class Longformer(Pattern):
    """Window i - d·t (t = 0..k) in the strided view of period d, plus the
    first g positions as global keys sharing the window's softmax."""

    name = "longformer"
    impls = IMPLS

    def __init__(self, window, dilation=1, global_tokens=1):
        self.window, self.dilation, self.g = window, dilation, global_tokens

    def spec(self):
        return window_spec(self.window)

    def _masks(self, n):
        def build():
            _, back, _, valid = strided_rows(n, self.dilation, self.spec())
            window = valid & (back.abs() <= self.window) & (back >= 0)
            i = torch.arange(n).view(n, 1)
            j = torch.arange(self.g).view(1, self.g)
            steps = i - j
            local = (steps.abs() % self.dilation == 0) & (steps.abs() // self.dilation <= self.window)
            glob = ~local & (steps >= 0)
            return _view_as_blocks_mask(window), glob
        return cached(("longformer", self.window, self.dilation, self.g, n), build)

    def attend(self, q, k, v, drop=0.0, impl="matmul", alpha=None):
        if impl == "sdpa":
            return self._attend_sdpa(q, k, v, drop)
        n, dh = q.shape[2], q.shape[3]
        view = Strided(n, self.dilation)
        window_mask, global_mask = self._masks(n)
        blocked = Blocked(view.view(q), view.view(k), view.view(v), self.spec(), None)
        window_scores = blocked.scores()
        scores = view.per_query(window_scores)
        bias = cached(("longformer-bias", self.window, self.dilation, self.g, n),
                      lambda: torch.cat([bias_of(view.per_query(window_mask)), bias_of(global_mask).view(1, 1, n, self.g)], -1))
        if self.g:
            global_scores = torch.matmul(q * (1 / math.sqrt(dh)), k[:, :, :self.g].transpose(-1, -2))
            scores = torch.cat([scores, global_scores], dim=-1)
        weights = torch.softmax(scores + bias, dim=-1)
        if drop:
            weights = F.dropout(weights, drop)
        keys = window_scores.shape[-1]
        out = view.output(blocked, view.to_blocks(weights[..., :keys], window_scores))
        if self.g:
            out = out + torch.matmul(weights[..., keys:], v[:, :, :self.g])
        return out

    def _attend_sdpa(self, q, k, v, drop):
        """Dilation 1 only: the global keys appended to every block's keys, one SDPA call."""
        assert self.dilation == 1, "sdpa form: dilation 1 only"
        n = q.shape[2]
        spec = self.spec()
        blocked = Blocked(q, k, v, spec, None)
        nb = spec.num_blocks(n)

        def build():
            query, key = spec.positions(n)
            distance = query - key
            window = within(query, n) & within(key, n) & (distance >= 0) & (distance <= self.window)
            gkey = torch.arange(self.g).view(1, 1, self.g)
            glob = (query - gkey > self.window) & within(query, n)
            return bias_of(torch.cat([window, glob.expand(nb, spec.size, self.g)], -1))
        bias = cached(("longformer-sdpa", self.window, self.g, n), build)
        b, h = q.shape[:2]
        gk = k[:, :, :self.g].unsqueeze(2).expand(b, h, nb, self.g, k.shape[3])
        gv = v[:, :, :self.g].unsqueeze(2).expand(b, h, nb, self.g, v.shape[3])
        keys, values = torch.cat([blocked.k, gk], 3), torch.cat([blocked.v, gv], 3)
        out = F.scaled_dot_product_attention(blocked.q, keys, values, attn_mask=bias, dropout_p=drop)
        return from_blocks(out, spec, n)

    def allows(self, heads, n):
        i, j = _dense_positions(n)
        d = i - j
        local = (d >= 0) & (d % self.dilation == 0) & (d // self.dilation <= self.window)
        return ((j <= i) & (local | (j < self.g))).unsqueeze(0)

    def scored_pairs(self, n):
        rows = Strided(n, self.dilation).rows
        return self.dilation * self.spec().scored_pairs(rows) + self.g * n


# ---------------------------------------------------------------------------
# BigBird (models/bigbird.go), causal
# ---------------------------------------------------------------------------

MASK64 = (1 << 64) - 1


def splitmix(x):
    """SplitMix64's finaliser, as models/bigbird.go (uint64 arithmetic)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


class BigBird(Pattern):
    """Blocks of b: each query block scores its window (previous block and
    itself), the G global blocks and R random blocks drawn before its window
    from ecpi's hashed layout (seed of layer 0: splitmix(layout_seed + 0))."""

    name = "bigbird"
    impls = IMPLS

    def __init__(self, n, block, global_blocks=1, random_blocks=2, heads=4, layout_seed=1, layer=0):
        self.n, self.b, self.G, self.R, self.heads = n, block, global_blocks, random_blocks, heads
        self.seed = splitmix((layout_seed + layer) & MASK64)

    def spec(self):
        return BlockSpec(self.b, before=1)

    def random_blocks(self, head, q):
        end = max(0, q - 1)
        candidates = [kb for kb in range(self.G, end) if not (q - 1 <= kb <= q)]
        picks, chosen, taken = min(self.R, len(candidates)), [], set()
        for slot in range(picks):
            x = splitmix(self.seed ^ ((head << 40) & MASK64) ^ ((q << 8) & MASK64) ^ slot) % len(candidates)
            while x in taken:
                x = (x + 1) % len(candidates)
            taken.add(x)
            chosen.append(candidates[x])
        return chosen

    def _layout(self):
        """Gather table [H, nb, R] (block nb = a zero block) and the mask bias [H, nb, b, keys]."""
        def build():
            nb, b = self.n // self.b, self.b
            table = torch.full((self.heads, nb, self.R), nb, dtype=torch.long)
            exists = torch.zeros(self.heads, nb, 1, self.R * b, dtype=torch.bool)
            for h in range(self.heads):
                for q in range(nb):
                    for r, kb in enumerate(self.random_blocks(h, q)):
                        table[h, q, r] = kb
                        exists[h, q, 0, r * b:(r + 1) * b] = True
            spec = self.spec()
            query, key = spec.positions(self.n)
            window = within(key, self.n) & (key <= query)
            qblock = query // b
            gblock = torch.arange(self.G * b).view(1, 1, -1) // b
            glob = (gblock < qblock - 1) | (gblock > qblock)
            parts = [window.expand(nb, b, 2 * b), glob.expand(nb, b, self.G * b)]
            parts = [p.unsqueeze(0).expand(self.heads, *p.shape) for p in parts]
            parts.append(exists.expand(self.heads, nb, b, self.R * b))
            return table, bias_of(torch.cat(parts, -1))
        return cached(("bigbird", self.n, self.b, self.G, self.R, self.heads, self.seed), build)

    def _gather(self, blocks, table):
        """Each query block's keys [B, H, nb, (2+G+R)·b, d]: window, globals, random."""
        bsz, h, nb, b, d = blocks.shape
        parts = [neighbour_blocks(blocks, self.spec())]
        if self.G:
            glob = blocks[:, :, :self.G].reshape(bsz, h, 1, self.G * b, d)
            parts.append(glob.expand(bsz, h, nb, self.G * b, d))
        if self.R:
            with_zero = pad_seq(blocks, 2, 0, 1)
            heads = torch.arange(h).view(h, 1, 1)
            random = with_zero[:, heads, table]  # [B, H, nb, R, b, d]
            parts.append(random.reshape(bsz, h, nb, self.R * b, d))
        return torch.cat(parts, dim=3)

    def attend(self, q, k, v, drop=0.0, impl="matmul", alpha=None):
        spec = self.spec()
        table, bias = self._layout()
        queries = to_blocks(q, spec)
        keys = self._gather(to_blocks(k, spec), table)
        values = self._gather(to_blocks(v, spec), table)
        if impl == "sdpa":
            out = F.scaled_dot_product_attention(queries, keys, values, attn_mask=bias, dropout_p=drop)
        else:
            scores = torch.matmul(queries * (1 / math.sqrt(q.shape[3])), keys.transpose(-1, -2))
            weights = torch.softmax(scores + bias, dim=-1)
            if drop:
                weights = F.dropout(weights, drop)
            out = torch.matmul(weights, values)
        return from_blocks(out, spec, self.n)

    def allows(self, heads, n):
        i, j = _dense_positions(n)
        qb, kb = i // self.b, j // self.b
        base = (j <= i) & ((kb >= qb - 1) & (kb <= qb) | (kb < self.G))
        masks = []
        for h in range(heads):
            m = base.clone()
            for q in range(n // self.b):
                for r in self.random_blocks(h, q):
                    m[q * self.b:(q + 1) * self.b, r * self.b:(r + 1) * self.b] = True
            masks.append(m & (j <= i))
        return torch.stack(masks)

    def scored_pairs(self, n):
        return n * self.b * (2 + self.G + self.R)


# ---------------------------------------------------------------------------
# `bench attention`'s variants at window w (bench/attention.go PatternConfig +
# each family's BenchWindow)
# ---------------------------------------------------------------------------

VARIANTS = ("sdpa", "full", "local", "ecp", "s2", "pi", "longformer", "bigbird")


def bench_pattern(variant, n, window=256, heads=4):
    """The pattern `ecpi bench attention` times for a variant at length n."""
    if variant == "sdpa":
        return SDPA()
    if variant == "full":
        return Full()
    if variant == "local":
        return Local(window)
    if variant == "ecp":
        return ECP(window)
    if variant == "s2":
        return S2(2 * window, heads)
    if variant == "pi":
        return Pi.for_length(window, n)
    if variant == "longformer":
        return Longformer(window, 1, 1)
    if variant == "bigbird":
        return BigBird(n, window, 1, 2, heads)
    raise ValueError(f"unknown variant {variant!r} (want one of {', '.join(VARIANTS)})")


def dense_reference(pattern, q, k, v, alpha=None):
    """The ground truth: dense scores with K(i) as the mask (π: with its log-priors)."""
    heads, n = q.shape[1], q.shape[2]
    allowed = pattern.allows(heads, n)
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[3])
    if isinstance(pattern, Pi):
        skip = pattern.is_skip(n) & ~pattern.local.allows(heads, n)[0]
        a = torch.full(q.shape[:3], 0.5, dtype=q.dtype) if alpha is None else alpha
        a = a.unsqueeze(-1)
        scores = scores + torch.where(skip, torch.log1p(-a), torch.log(a))
    scores = scores.masked_fill(~allowed, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)
