#!/usr/bin/env python3
"""Runs a notebook through a Jupyter server's REST and websocket API, as a browser would.

The notebook is read through the contents API (so it is the server's copy, from the mounted folder), a kernel
is started with the kernels API, each code cell is sent as an execute_request on the kernel's websocket, and the
run fails on the first cell that errors or exceeds its time. The executed notebook is written to --out.

Needs python3-requests and python3-websocket (Debian; both come with docker-compose).
"""
import argparse
import html
import json
import re
import sys
import time
import uuid

import requests
import websocket


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", default="http://127.0.0.1:8888", help="Jupyter server base URL")
    p.add_argument("--token", required=True, help="Jupyter server token")
    p.add_argument("--kernel", required=True, help="kernelspec name to run the notebook with")
    p.add_argument("--notebook", required=True, help="notebook path relative to the server's root")
    p.add_argument("--out", required=True, help="where to write the executed notebook")
    p.add_argument("--cell-timeout", type=float, default=900, help="seconds allowed for one cell")
    return p.parse_args()


class Kernel:
    """One kernel on the server and its websocket channels."""

    def __init__(self, url, token, name):
        self.url, self.token = url.rstrip("/"), token
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"token {token}"
        r = self.http.post(f"{self.url}/api/kernels", json={"name": name}, timeout=60)
        r.raise_for_status()
        self.id = r.json()["id"]
        ws_url = self.url.replace("http", "ws", 1) + f"/api/kernels/{self.id}/channels?token={token}"
        self.ws = websocket.create_connection(ws_url, timeout=60)
        self.session = uuid.uuid4().hex

    def execute(self, code, timeout):
        """Runs code; returns (outputs in nbformat form, error message or None)."""
        msg_id = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": self.session,
                       "username": "docker-test", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True},
        }))
        outputs, error, idle, replied = [], None, False, False
        deadline = time.monotonic() + timeout
        while not (idle and replied):
            left = deadline - time.monotonic()
            if left <= 0:
                return outputs, f"no reply within {timeout:.0f} s"
            self.ws.settimeout(left)
            raw = self.ws.recv()
            if isinstance(raw, bytes):  # binary frames carry buffers, which notebook outputs never need
                continue
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["header"]["msg_type"], msg["content"]
            if kind == "stream":
                outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
            elif kind in ("display_data", "execute_result"):
                outputs.append({"output_type": kind, "data": content["data"],
                                "metadata": content.get("metadata", {}),
                                **({"execution_count": content["execution_count"]}
                                   if kind == "execute_result" else {})})
            elif kind == "error":
                outputs.append({"output_type": "error", "ename": content["ename"],
                                "evalue": content["evalue"], "traceback": content["traceback"]})
                error = f"{content['ename']}: {content['evalue']}"
            elif kind == "execute_reply":
                replied = True
                if content["status"] != "ok" and error is None:
                    error = f"execute_reply status {content['status']}: {content.get('evalue', '')}"
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
        return outputs, error

    def shutdown(self):
        self.ws.close()
        self.http.delete(f"{self.url}/api/kernels/{self.id}", timeout=60)


def print_failure(cell):
    """Shows the failing cell's source, its stderr and its traceback (ANSI colours removed)."""
    print("".join(cell["source"]), file=sys.stderr)
    for out in cell["outputs"]:
        if out["output_type"] == "stream" and out["name"] == "stderr":
            print(out["text"], file=sys.stderr)
        elif out["output_type"] == "display_data" and "text/html" in out["data"]:
            # GoNB reports compile errors as HTML: show its text.
            text = re.sub(r"<style>.*?</style>|<[^>]+>", "", out["data"]["text/html"], flags=re.S)
            print(html.unescape(re.sub(r"\n\s*\n+", "\n", text)).strip()[-3000:], file=sys.stderr)
        elif out["output_type"] == "error":
            print(re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(out["traceback"])), file=sys.stderr)


def main():
    args = parse_args()
    http = requests.Session()
    http.headers["Authorization"] = f"token {args.token}"
    r = http.get(f"{args.url}/api/contents/{args.notebook}", params={"content": 1}, timeout=60)
    r.raise_for_status()
    nb = r.json()["content"]
    kernel = Kernel(args.url, args.token, args.kernel)
    failed = None
    try:
        cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
        for i, cell in enumerate(cells, 1):
            start = time.monotonic()
            cell["outputs"], error = kernel.execute("".join(cell["source"]), args.cell_timeout)
            print(f"cell {i}/{len(cells)}: {time.monotonic() - start:.1f} s"
                  + (f" FAILED: {error}" if error else ""), flush=True)
            if error:
                print_failure(cell)
                failed = f"{args.notebook} cell {i} failed: {error}"
                break
    finally:
        kernel.shutdown()
        with open(args.out, "w") as f:
            json.dump(nb, f, indent=1)
    if failed:
        sys.exit(failed)
    print(f"{args.notebook}: all {len(cells)} code cells ran through kernel {args.kernel}")


if __name__ == "__main__":
    main()
