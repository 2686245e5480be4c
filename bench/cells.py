"""How long notebook cells take with the ecpi kernel, cold and warm.

    /usr/bin/python3 bench/cells.py            (after `make kernel`)

Runs cells one by one through the installed "ecpi (Go)" kernel and prints, for each, when its first training step
was shown (the progress line "step N/M") and when the cell ended, in seconds from the request. The first cell that
calls ecpi starts the kernel's session server (`ecpi serve`); the first training cell builds and compiles the model;
the cells after it reuse what the server keeps (the live training session, compiled graphs): that is "warm". Not a
test: the numbers depend on the machine and its load.
"""
import time

from jupyter_client.manager import start_new_kernel

MODEL = "model=ecp half_segment=32 n=256 dim=64 heads=4 layers=2 data=opticks batch=8 eval_every=0 eval_batches=4"

CELLS = [
    ("Go only (GoNB compiles and runs a cell)", 'import "fmt"\n%%\nfmt.Println("hello")'),
    ("first ecpi line: starts the session server", 'import "github.com/ecpi-dev/ecpi/nb"\n%%\nnb.Do("cost model=ecp n=4096")'),
    ("train 20 steps: builds and compiles the model (cold)", f'%%\nnb.Do("train {MODEL} steps=20 backend=xla")'),
    ("resume for one more step: the live session (warm)", '%%\nnb.Do("resume steps=21")'),
    ("resume for one more step (warm again)", '%%\nnb.Do("resume steps=22")'),
    ("evaluate the checkpoint: compiles the evaluation graph", '%%\nnb.Do("eval")'),
    ("evaluate again (warm)", '%%\nnb.Do("eval")'),
    ("sample 40 tokens: compiles the decoder", '%%\nnb.Do(`sample "Light " tokens=40`)'),
    ("sample again (warm)", '%%\nnb.Do(`sample "Light " tokens=40`)'),
    ("stop the session server", '%%\nnb.Do("quit")'),
]


def text_of(msg):
    content = msg["content"]
    if "text" in content:
        return content["text"]
    return "".join(str(v) for v in content.get("data", {}).values())


def run(client, code):
    """Runs code; returns (seconds to the first training step shown or None, seconds to the end)."""
    start = time.time()
    msg_id = client.execute(code)
    first_step = None
    while True:
        msg = client.get_iopub_msg(timeout=900)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if first_step is None and "step " in text_of(msg):
            first_step = time.time() - start
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return first_step, time.time() - start


def main():
    manager, client = start_new_kernel(kernel_name="ecpi")
    try:
        print(f"{'cell':58s} {'first step':>10s} {'cell':>8s}")
        for label, code in CELLS:
            first_step, total = run(client, code)
            step = f"{first_step:10.1f}" if first_step is not None else f"{'':>10s}"
            print(f"{label:58s} {step} {total:8.1f}", flush=True)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
