"""Runs bench/peer/peer.py's twins on a device of choice (cuda or cpu), several
measurements in one process, one JSON line per measurement on stdout, each
tagged with its job number and device.

    python3 bench/gpu/peer_device.py --device cuda --jobs '[["peak","--size=8192"], ["train","--family=ecp"]]'

peer.py was written for the CPU and stays untouched; this wrapper changes, from
outside, only what a GPU needs:
- torch.set_default_device: inputs, masks and the model twins are made on the
  device with no change to peer.py's code;
- each job's first torch.Generator() is made on the device, because
  set_default_device leaves generators on the CPU and a CPU generator cannot
  feed torch.randn on the GPU (peer.py makes one generator per job);
- peer.timed synchronises after every call: CUDA runs asynchronously, so the
  wall clock of a call that does not read a result back would measure only
  the launch of its kernels;
- each result carries the device's peak allocated memory (peer.py's max RSS
  counts the host only).
One process for every job pays torch's import and CUDA's start-up once; an
exception in one job is that job's error line, and the next job still runs.
"""

import argparse
import contextlib
import io
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(os.path.dirname(HERE), "peer")


def next_generator_on(torch, device):
    """The next torch.Generator() made without a device goes on `device`; later ones are plain again."""
    original = getattr(torch, "_peer_device_original_generator", torch.Generator)
    torch._peer_device_original_generator = original

    class Meta(type):
        def __call__(cls, *args, **kwargs):
            torch.Generator = original
            if not args and "device" not in kwargs:
                kwargs["device"] = device
            return original(*args, **kwargs)

        # Code that asks isinstance(x, torch.Generator) meanwhile gets the real answer.
        def __instancecheck__(cls, obj):
            return isinstance(obj, original)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, original)

    torch.Generator = Meta("Generator", (), {})


def patch(peer, torch, device, precision):
    cuda = device.startswith("cuda")
    if device != "cpu":
        torch.set_default_device(device)
    timed, emit = peer.timed, peer.emit

    def synced_timed(fn, warmup, runs):
        def call():
            out = fn()
            if cuda:
                torch.cuda.synchronize()
            return out
        return timed(call, warmup, runs)

    def emit_with_device(result, first, base):
        result["device"], result["matmul_precision"] = device, precision
        if cuda:
            result["device_name"] = torch.cuda.get_device_name()
            result["cuda_peak_mb"] = torch.cuda.max_memory_allocated() / 2 ** 20
            torch.cuda.reset_peak_memory_stats()
        emit(result, first, base)

    peer.timed, peer.emit = synced_timed, emit_with_device


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--matmul-precision", default="highest",
                   help="torch.set_float32_matmul_precision: highest (float32), high (TF32 on CUDA), medium")
    p.add_argument("--jobs", required=True, help="JSON list of peer.py argument lists")
    a = p.parse_args()
    jobs = json.loads(a.jobs)
    sys.path.insert(0, PEER)
    import torch
    import peer
    torch.set_float32_matmul_precision(a.matmul_precision)
    patch(peer, torch, a.device, a.matmul_precision)
    for i, argv in enumerate(jobs):
        if a.device != "cpu":
            next_generator_on(torch, a.device)
        buffer, error, start = io.StringIO(), None, time.time()
        try:
            with contextlib.redirect_stdout(buffer):
                peer.main(argv)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # argparse's SystemExit too: this job's error, not the run's
            error = f"{type(e).__name__}: {str(e)[:400]}"
        lines = [line for line in buffer.getvalue().splitlines() if line.startswith("{")]
        for line in lines:
            record = json.loads(line)
            record.update(job=i, argv=argv)
            record.setdefault("device", a.device)  # peak's line does not pass through emit
            record.setdefault("matmul_precision", a.matmul_precision)
            print(json.dumps(record), flush=True)
        if error or not lines:
            print(json.dumps(dict(job=i, argv=argv, device=a.device, error=error or "no result",
                                  seconds=time.time() - start)), flush=True)
        if a.device.startswith("cuda"):
            torch.cuda.synchronize()
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
