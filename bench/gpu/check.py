#!/usr/bin/env python3
"""The run half of scripts/gpu-check.sh: ecpi's GPU check from what `prepare`
built (bench/gpu/carry), on a machine without Go. bench/gpu/README.md says what
each step does and what the results file holds.

    python3 bench/gpu/check.py                 # the GPU check (xla:cuda), under 8 minutes
    python3 bench/gpu/check.py --cpu           # the same steps on the XLA CPU plugin, tiny sizes
    python3 bench/gpu/check.py --set attention_n=1024,4096 --set budget=200

Standard library only: the GPU machine's python3 is whatever its image holds.
"""

import argparse
import datetime
import glob
import gzip
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

FAMILIES = ["full", "local", "s2", "ecp", "pi", "longformer", "bigbird"]
# The families bench/peer has training twins of.
TWIN_FAMILIES = ["ecp", "pi", "full", "local"]

# Every knob of a run, per profile; --set key=value overrides one. The GPU's
# step budgets add up to under 8 minutes with start-up, since a device lease
# of 15 minutes must leave room for the machine's start and one rerun. Budgets
# are ceilings: a step that finishes early leaves its time to the next ones.
PROFILES = {
    "gpu": dict(
        budget=465,  # seconds for the whole run; every step's timeout is cut to what is left
        tests="DenseReference|MatchesDense|MatchesAutodiff|Fused",
        tests_timeout=90,
        train_families=["ecp", "pi", "full", "local"], train_sizes=["small", "large"], train_steps=10,
        train_budget=90,
        # cuDNN's fused attention (bf16) against ecpi's own forms: full with fused=dense, the masked
        # families with fused=masked (the n×n mask is 1 GiB at n = 8192, B = 2, H = 4: ChooseFused's limit).
        fused_families=["full", "local", "longformer", "ecp"], fused_n=[1024, 4096, 8192], fused_budget=70,
        # And a dense model's training steps, bf16 without dropout, fused=dense against fused=off: the fused
        # op's gradient inside a whole training graph (the CPU half leaves this to TestFusedOptionFallsBackOffCUDA).
        fused_train=["model=full", "n=2048", "dim=512", "heads=8", "layers=4", "batch=8", "steps=11"],
        # The paper presets in the order first; what the budget leaves out is recorded as skipped.
        presets=["ecp-wikitext103", "pi-125m", "ecp-pg19", "perceiverar-wikitext103", "ecp-scifar10", "pi-350m",
                 "pi-760m", "pi-1.5b"],
        preset_steps=3, preset_devices=8, preset_shrink=[], preset_timeout=60, preset_budget=100,
        attention_families=FAMILIES, attention_n=[1024, 2048, 4096, 8192, 16384, 32768, 65536],
        attention_runs=3, attention_window=256, attention_budget=110,
        generate_families=FAMILIES, generate_n=[1024, 4096], generate_tokens=16, generate_budget=35,
        # "high": TF32 matmuls, as go-xla gives ecpi on CUDA by default (DotGeneralUseTF32), so both
        # sides do the same arithmetic; "highest" would time PyTorch in strict float32.
        peer_device="cuda", peer_matmul_precision="high", peer_attention_n=[4096, 16384],
        peer_sizes=["small", "large"], peer_steps=10, peer_runs=3, peer_peak_size=8192, peer_budget=60,
    ),
    "cpu": dict(
        # About 80 s alone on 2 cores; the ceilings allow for a machine busy with other tests.
        budget=420,
        tests="TestBlockFormsMatchDenseReference|TestGateMatchesDenseReference|TestChooseFusedSaysWhy",
        tests_timeout=180,
        train_families=["ecp"], train_sizes=["small", "large"], train_steps=1,
        train_budget=90,
        # On the CPU every form must be ecpi's own (the fused op is CUDA's): the check is that it falls back.
        fused_families=["full", "ecp"], fused_n=[256], fused_budget=60, fused_train=[],
        # One preset, shrunk: a paper preset's step takes minutes on 2 cores.
        presets=["ecp-wikitext103"], preset_steps=1, preset_devices=8,
        preset_shrink=["layers=1", "dim=32", "heads=2", "n=256", "batch=1"], preset_timeout=60, preset_budget=60,
        attention_families=FAMILIES, attention_n=[256, 512],
        attention_runs=1, attention_window=64, attention_budget=120,
        generate_families=["ecp", "pi", "full"], generate_n=[256], generate_tokens=4, generate_budget=60,
        peer_device="cpu", peer_matmul_precision="highest", peer_attention_n=[256], peer_sizes=["small"], peer_steps=2,
        peer_runs=1, peer_peak_size=512, peer_budget=60,
    ),
}

# PJRT plugin file names go-xla and JAX use, for the search.
CUDA_PLUGIN_GLOBS = ["jax_plugins/xla_cuda*/xla_cuda_plugin.so", "**/pjrt_c_api_cuda_plugin.so",
                     "**/*pjrt*cuda*.so", "**/xla_cuda_plugin.so"]
# What JAX's own loader (jax_plugins/xla_cuda13/__init__.py) opens before the
# plugin: the plugin itself links only libc and libstdc++ and dlopens these at
# client creation, so `ldd` on it shows nothing missing even when they are.
CUDA_LIBRARIES = ["libcuda.so.1", "libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libnvrtc.so.13",
                  "libcufft.so.12", "libcusolver.so.12", "libcusparse.so.12", "libcupti.so.13", "libcudnn.so.9",
                  "libnccl.so.2", "libnvshmem_host.so.3", "libnvJitLink.so.13"]
# Without these XLA cannot run anything on the GPU; the rest serve some ops only.
CUDA_ESSENTIAL = ["libcuda.so.1", "libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13"]

# H200 SXM datasheet peaks (dense), for the share of peak in the summary.
H200_PEAK_TFLOPS = {"fp32": 67.0, "tf32": 494.7, "bf16": 989.4}


class Run:
    """The results file (results.jsonl: one JSON object per line, written as
    each step ends, so a killed run still leaves what it did) and the log."""

    def __init__(self, out_dir, profile, p):
        os.makedirs(out_dir, exist_ok=True)
        self.out_dir, self.profile, self.p = out_dir, profile, p
        self.results = open(os.path.join(out_dir, "results.jsonl"), "w")
        self.logfile = open(os.path.join(out_dir, "check.log"), "w")
        self.start = time.time()
        self.steps = []

    def left(self):
        return self.p["budget"] - (time.time() - self.start)

    def log(self, msg=""):
        stamp = f"[{time.time() - self.start:6.1f}s] "
        for line in str(msg).splitlines() or [""]:
            print(stamp + line, flush=True)
            self.logfile.write(stamp + line + "\n")
        self.logfile.flush()

    def write(self, obj):
        self.results.write(json.dumps(obj, default=str) + "\n")
        self.results.flush()

    def step(self, name, status, why="", required=False, seconds=None, **data):
        """status: ok, failed or skipped; why: one line a person reads first."""
        rec = dict(kind="step", step=name, status=status, why=why, required=required,
                   seconds=round(seconds, 1) if seconds is not None else None, **data)
        self.steps.append(rec)
        self.write(rec)
        self.log(f"== {name}: {status.upper()}" + (f" — {why}" if why else ""))
        return rec

    def cap(self, seconds):
        """A step's timeout: its own ceiling, never past the run's budget."""
        return max(0.0, min(seconds, self.left()))


def run_cmd(r, cmd, timeout, env=None, cwd=None, quiet=False):
    """Runs cmd in a process group of its own (ecpi restarts itself, test
    binaries start children), killed whole at the timeout. Returns rc
    (None on timeout), stdout, stderr, seconds, timed_out, and the JSON lines of stdout."""
    start = time.time()
    shown = " ".join(cmd).replace("\n", " ")
    r.log("$ " + (shown if len(shown) < 400 else shown[:400] + " ...") + f"   (timeout {timeout:.0f}s)")
    if timeout <= 1:
        return dict(rc=None, stdout="", stderr="not started: the run's time budget is spent", seconds=0.0,
                    timed_out=True, json=[], cmd=cmd)
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                                start_new_session=True, text=True, errors="replace")
    except OSError as e:
        return dict(rc=127, stdout="", stderr=f"cannot start {cmd[0]}: {e}", seconds=0.0, timed_out=False,
                    json=[], cmd=cmd)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    seconds = time.time() - start
    lines = json_lines(out)
    rc = None if timed_out else proc.returncode
    if not quiet or rc != 0:
        tail = err.strip().splitlines()[-60:]
        if tail:
            r.log("  stderr (last lines):\n" + "\n".join("  | " + t for t in tail))
    r.log(f"  -> {'TIMEOUT' if timed_out else 'exit ' + str(rc)} in {seconds:.1f}s, {len(lines)} JSON line(s)")
    return dict(rc=rc, stdout=out, stderr=err, seconds=seconds, timed_out=timed_out, json=lines, cmd=cmd)


def json_lines(text):
    """The JSON objects among a command's output lines (ecpi's --json prints one per result)."""
    objects = []
    for line in (l.strip() for l in text.splitlines()):
        if line.startswith("{"):
            try:
                objects.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a log line that happens to start with a brace
    return objects


def err_line(res, limit=400):
    """The line of a failed command that says why: ecpi's own 'ecpi: ...' line if any, else the last one."""
    if res["timed_out"]:
        return f"timed out after {res['seconds']:.0f}s"
    lines = [l.strip() for l in (res["stderr"] + "\n" + res["stdout"]).splitlines() if l.strip()]
    for line in reversed(lines):
        if line.startswith("ecpi:") or line.startswith("FAIL") or "Error" in line or "error" in line:
            return line[:limit]
    return (lines[-1] if lines else f"exit {res['rc']}")[:limit]


# ---------------------------------------------------------------------------
# Environment, unpacking
# ---------------------------------------------------------------------------


def read_text(cmd, timeout=20):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def environment(r, carry):
    manifest = {}
    try:
        manifest = json.load(open(os.path.join(carry, "manifest.json")))
    except (OSError, ValueError):
        pass
    cpu = ""
    try:
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    except OSError:
        pass
    gpu = read_text(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_cap",
                     "--format=csv,noheader"]) if shutil.which("nvidia-smi") else ""
    env = dict(host=socket.gethostname(), date=datetime.datetime.now().isoformat(timespec="seconds"),
               profile=r.profile, platform=platform.platform(), glibc=" ".join(platform.libc_ver()),
               python=sys.version.split()[0], python_path=sys.executable, cpus=os.cpu_count(), cpu=cpu,
               gpu=gpu or None, go_on_path=shutil.which("go"), settings=r.p, carry=manifest,
               # What the numbers mean: go-xla sets DotGeneralUseTF32 for CUDA plugins unless tf32=false.
               ecpi_dot_precision="float32 on CPU" if r.profile == "cpu" else "TF32 dot products (go-xla's default on CUDA)")
    r.write(dict(kind="header", **env))
    r.log(f"ecpi GPU check, profile {r.profile}, on {env['host']} ({cpu}, {os.cpu_count()} CPUs)")
    r.log(f"GPU: {gpu or 'none seen by nvidia-smi'}")
    r.log(f"carried build: commit {manifest.get('commit', '?')}{' (uncommitted changes)' if manifest.get('dirty') else ''}, "
          f"built {manifest.get('built', '?')}, go-xla {manifest.get('go_xla', '?')} "
          f"(PJRT C API {manifest.get('pjrt_api', '?')})")
    return manifest


def unpack(r, carry, work, manifest):
    start = time.time()
    binaries = {}
    for name in ("ecpi", "models.test"):
        src = os.path.join(carry, name + ".gz")
        if not os.path.exists(src):
            return r.step("unpack", "failed", f"{src} is missing: run `bash scripts/gpu-check.sh prepare` on a machine "
                          "with Go, then carry bench/gpu/carry", required=True, seconds=time.time() - start)
        dst = os.path.join(work, "bin", name)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with gzip.open(src, "rb") as f, open(dst, "wb") as g:
            shutil.copyfileobj(f, g)
        os.chmod(dst, 0o755)
        binaries[name] = dst
    # The binaries link glibc dynamically (cgo): one built against a newer glibc than this machine's will not start.
    need, have = manifest.get("glibc_needed"), platform.libc_ver()[1]
    if need and have and version_tuple(have) < version_tuple(need):
        return r.step("unpack", "failed", f"the carried binaries need glibc {need}, this machine has {have}: "
                      "prepare on a machine with an older glibc", required=True, seconds=time.time() - start)
    res = run_cmd(r, [binaries["ecpi"], "help"], 30, quiet=True)
    if res["rc"] != 0:
        return r.step("unpack", "failed", f"the carried ecpi does not start: {err_line(res)}", required=True,
                      seconds=time.time() - start)
    r.binaries = binaries
    r.help_train = run_cmd(r, [binaries["ecpi"], "help", "bench", "train"], 30, quiet=True)["stdout"]
    return r.step("unpack", "ok", f"ecpi and models.test unpacked into {work}/bin", required=True,
                  seconds=time.time() - start, glibc_needed=need, glibc_here=have)


def version_tuple(v):
    return tuple(int(x) for x in re.findall(r"\d+", v))


# ---------------------------------------------------------------------------
# The plugin
# ---------------------------------------------------------------------------


def site_dirs():
    """Every folder Python packages may live in on this machine: this interpreter's, then common venvs."""
    dirs = [p for p in sys.path if p and os.path.isdir(p) and ("site-packages" in p or "dist-packages" in p)]
    try:
        import site
        dirs += site.getsitepackages() + [site.getusersitepackages()]
    except (ImportError, AttributeError):
        pass
    for pattern in ("/opt/*/.venv/lib/python3*/site-packages", "/opt/*/lib/python3*/site-packages",
                    "/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
                    "/usr/lib/python3/dist-packages", os.path.expanduser("~/.local/lib/python3*/site-packages")):
        dirs += glob.glob(pattern)
    seen, out = set(), []
    for d in dirs:
        d = os.path.realpath(d)
        if os.path.isdir(d) and d not in seen:
            seen.add(d)
            out.append(d)
    return out


def find_cuda_plugin(r, work):
    """(path, how it was found, every place looked). ECPI_CUDA_PLUGIN names a .so,
    a folder or a jax-cuda*-pjrt wheel; else the installed jax-cuda*-pjrt
    distribution; else a glob of every site-packages and go-xla's own folders."""
    looked = []
    given = os.environ.get("ECPI_CUDA_PLUGIN", "")
    if given:
        looked.append(f"ECPI_CUDA_PLUGIN={given}")
        if given.endswith(".whl"):
            # Unpacked with its layout (jax_plugins/xla_cudaNN/) next to a link to the installed nvidia
            # libraries, so the plugin's RPATH ($ORIGIN/../../nvidia/cu13/lib) finds them as in site-packages.
            dest = os.path.join(work, "wheel")
            with zipfile.ZipFile(given) as z:
                names = [n for n in z.namelist() if n.endswith(".so")]
                z.extractall(dest, names)
            nvidia = next((os.path.join(d, "nvidia") for d in site_dirs() if os.path.isdir(os.path.join(d, "nvidia"))), None)
            if nvidia:
                os.symlink(nvidia, os.path.join(dest, "nvidia"))
            found = [os.path.join(dest, n) for n in names if "cuda" in n]
            return (found[0] if found else None), "the wheel named by ECPI_CUDA_PLUGIN", looked
        if os.path.isfile(given):
            return os.path.abspath(given), "ECPI_CUDA_PLUGIN", looked
        if os.path.isdir(given):
            for pattern in CUDA_PLUGIN_GLOBS:
                hits = sorted(glob.glob(os.path.join(given, pattern), recursive=True))
                if hits:
                    return os.path.abspath(hits[0]), "the folder named by ECPI_CUDA_PLUGIN", looked
        return None, "", looked
    try:
        import importlib.metadata as md
        for dist in md.distributions():
            name = (dist.metadata.get("Name") or "").lower().replace("_", "-")
            if re.fullmatch(r"jax-cuda\d+-pjrt", name):
                looked.append(f"distribution {name} {dist.version}")
                for f in dist.files or []:
                    if str(f).endswith(".so") and "cuda" in str(f):
                        path = os.path.realpath(str(dist.locate_file(f)))
                        if os.path.isfile(path):
                            return path, f"pip distribution {name} {dist.version}", looked
    except Exception as e:  # a broken distribution's metadata must not end the search
        looked.append(f"importlib.metadata: {e}")
    dirs = site_dirs() + [os.path.join(os.environ.get("ECPI_HOME", os.path.expanduser("~/.ecpi")), "xla"),
                          os.path.expanduser("~/.local/lib/go-xla"), "/usr/local/lib/go-xla"]
    for d in dirs:
        looked.append(d)
        for pattern in CUDA_PLUGIN_GLOBS[:2]:
            hits = sorted(glob.glob(os.path.join(d, pattern), recursive=True))
            if hits:
                return os.path.abspath(hits[0]), f"a search of {d}", looked
    return None, "", looked


def pjrt_version(r, plugin, env):
    """The PJRT C API version the plugin reports, read in a child process (loading
    runs the plugin's initialisers; a crash or hang there must not take the check with it)."""
    code = r"""
import ctypes, struct, sys
lib = ctypes.CDLL(sys.argv[1])
lib.GetPjrtApi.restype = ctypes.c_void_p
# PJRT_Api starts with struct_size, extension_start, then PJRT_Api_Version {struct_size, extension_start, major, minor}.
print("%d.%d" % struct.unpack_from("<QQQQii", ctypes.string_at(lib.GetPjrtApi(), 40))[4:])
"""
    res = run_cmd(r, [sys.executable, "-c", code, plugin], 90, env=env, quiet=True)
    if res["rc"] == 0 and re.fullmatch(r"\d+\.\d+", res["stdout"].strip()):
        return res["stdout"].strip(), None
    return None, err_line(res)


def rpath_dirs(plugin):
    """The plugin's RPATH/RUNPATH folders with $ORIGIN resolved: readelf where it
    exists, else the strings that begin with $ORIGIN in the file itself."""
    origin = os.path.dirname(plugin)
    text = read_text(["readelf", "-d", plugin]) if shutil.which("readelf") else ""
    entries = []
    for m in re.finditer(r"\((?:RPATH|RUNPATH)\)\s+Library r(?:un)?path: \[(.*)\]", text):
        entries += m.group(1).split(":")
    if not text:
        with open(plugin, "rb") as f:
            for m in re.finditer(rb"\$ORIGIN[^\x00]{0,4000}", f.read()):
                entries += m.group(0).decode(errors="replace").split(":")
    out = []
    for e in entries:
        d = os.path.normpath(e.replace("$ORIGIN", origin).replace("${ORIGIN}", origin))
        if d not in out:
            out.append(d)
    return out


def ldconfig_paths():
    text = read_text(["ldconfig", "-p"]) if shutil.which("ldconfig") else read_text(["/sbin/ldconfig", "-p"])
    libs = {}
    for m in re.finditer(r"^\s*(\S+) \(.*\) => (\S+)$", text, re.M):
        libs.setdefault(m.group(1), m.group(2))
    return libs


def cuda_libraries(plugin):
    """Where each library the plugin will dlopen is found (RPATH, LD_LIBRARY_PATH,
    the loader's cache, the nvidia folders of site-packages), and the folders to
    add to LD_LIBRARY_PATH for the ones only found outside the loader's reach."""
    rpaths = rpath_dirs(plugin)
    ld_paths = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    cache = ldconfig_paths()
    extra_dirs = ["/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/local/cuda/lib64",
                  "/usr/lib/x86_64-linux-gnu", "/usr/lib64"]
    nvidia_dirs = []
    for d in site_dirs():
        nvidia_dirs += sorted(glob.glob(os.path.join(d, "nvidia", "*", "lib")))
    found, add = {}, []
    for lib in CUDA_LIBRARIES:
        where = None
        for d in rpaths + ld_paths:
            if os.path.exists(os.path.join(d, lib)):
                where = os.path.join(d, lib)
                break
        if not where and lib in cache:
            where = cache[lib]
        outside = None
        if not where:
            outside = next((os.path.join(d, lib) for d in nvidia_dirs + extra_dirs if os.path.exists(os.path.join(d, lib))), None)
        # Only the essential ones go on LD_LIBRARY_PATH: it is searched before the RUNPATH of the CUDA
        # libraries themselves, and a folder added for one library could swap in other versions of the rest.
        if outside and lib in CUDA_ESSENTIAL:
            where = outside
            if os.path.dirname(outside) not in add:
                add.append(os.path.dirname(outside))
        found[lib] = where or (f"not where the loader looks, but at {outside}" if outside else None)
    return dict(rpath=rpaths, rpath_existing=[d for d in rpaths if os.path.isdir(d)], libraries=found,
                missing=[l for l, w in found.items() if not w or w.startswith("not where")], ld_library_path_added=add)


def cuda_data_dirs():
    """Folders XLA could take as --xla_gpu_cuda_data_dir: each holds nvvm/libdevice (and ideally bin/ptxas)."""
    candidates = []
    for d in site_dirs():
        for hit in glob.glob(os.path.join(d, "nvidia", "*", "nvvm", "libdevice", "libdevice*.bc")):
            candidates.append(os.path.dirname(os.path.dirname(os.path.dirname(hit))))
    for hit in glob.glob("/usr/local/cuda*/nvvm/libdevice/libdevice*.bc"):
        candidates.append(os.path.dirname(os.path.dirname(os.path.dirname(hit))))
    nvcc = shutil.which("nvcc")
    if nvcc:
        root = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        if glob.glob(os.path.join(root, "nvvm", "libdevice", "libdevice*.bc")):
            candidates.append(root)
    out = []
    for c in candidates:
        if c not in out:
            out.append(c)
    # With ptxas beside libdevice first: XLA wants both from the same folder.
    return sorted(out, key=lambda c: not os.path.exists(os.path.join(c, "bin", "ptxas")))


def plugin_step(r, cpu, work, manifest):
    start = time.time()
    want = manifest.get("pjrt_api")
    env = dict(r.env)
    if cpu:
        plugin = r.args.cpu_plugin or os.path.join(r.real_home, "xla", "pjrt_c_api_cpu_plugin.so")
        how, looked = "the XLA CPU plugin (make xla-plugin)", [plugin]
        if not os.path.isfile(plugin):
            plugin = None
    else:
        plugin, how, looked = find_cuda_plugin(r, work)
    if not plugin:
        what = "XLA CPU plugin" if cpu else "CUDA PJRT plugin (pip package jax-cuda13-pjrt, or ECPI_CUDA_PLUGIN=/path/to/xla_cuda_plugin.so or a .whl)"
        return r.step("plugin", "failed", f"no {what} found; looked in: {'; '.join(looked)[:600]}",
                      required=True, seconds=time.time() - start, looked=looked), None
    libs = None
    if not cpu:
        libs = cuda_libraries(plugin)
        if libs["ld_library_path_added"]:
            env["LD_LIBRARY_PATH"] = ":".join(libs["ld_library_path_added"] + [env.get("LD_LIBRARY_PATH", "")]).rstrip(":")
    version, why = pjrt_version(r, plugin, env)
    data = dict(plugin=plugin, found_by=how, pjrt_api=version, go_xla_pjrt_api=want, looked=looked, cuda=libs,
                ldd_missing=ldd_missing(plugin, env))
    if version is None:
        return r.step("plugin", "failed", f"{plugin} does not load: {why}", required=True,
                      seconds=time.time() - start, **data), None
    if want:
        (have_major, have_minor), (want_major, want_minor) = version_tuple(version)[:2], version_tuple(want)[:2]
        if have_major != want_major or have_minor < want_minor:
            return r.step("plugin", "failed", f"{plugin} speaks PJRT C API {version}; go-xla {manifest.get('go_xla')} "
                          f"needs {want} or a newer minor version of the same major (an older plugin lacks functions it calls)",
                          required=True, seconds=time.time() - start, **data), None
    notes = []
    if libs and libs["missing"]:
        essential = [l for l in libs["missing"] if l in CUDA_ESSENTIAL]
        notes.append(f"libraries not found: {', '.join(libs['missing'])}"
                     + (f" (XLA cannot run without {', '.join(essential)})" if essential else ""))
    if libs and libs["ld_library_path_added"]:
        notes.append(f"LD_LIBRARY_PATH gets {':'.join(libs['ld_library_path_added'])}")
    if data["ldd_missing"]:
        notes.append(f"ldd: not found: {', '.join(data['ldd_missing'])}")
    r.env = env
    why = f"{plugin} (PJRT C API {version}; go-xla built for {want or '?'})" + ("; " + "; ".join(notes) if notes else "")
    return r.step("plugin", "ok", why, required=True, seconds=time.time() - start, **data), plugin


def ldd_missing(plugin, env):
    if not shutil.which("ldd"):
        return []
    try:
        text = subprocess.run(["ldd", plugin], capture_output=True, text=True, timeout=30, env=env).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return re.findall(r"^\s*(\S+) => not found", text, re.M)


# ---------------------------------------------------------------------------
# ecpi steps
# ---------------------------------------------------------------------------


def ecpi(r, *args):
    return [r.binaries["ecpi"], *args]


def doctor(r, backend):
    res = run_cmd(r, ecpi(r, "doctor", "backend=" + backend, "--json"), r.cap(90), env=r.env)
    report = next((x for x in res["json"] if "backend" in x), None)
    if res["rc"] != 0 or not report:
        return r.step("doctor", "failed", f"ecpi cannot open {backend}: {err_line(res)}", required=True,
                      seconds=res["seconds"], stderr_tail=res["stderr"][-3000:])
    if report.get("devices", 0) < 1:
        return r.step("doctor", "failed", f"{backend} opened with no device", required=True, seconds=res["seconds"],
                      report=report)
    return r.step("doctor", "ok", f"{report['backend']}, {report['devices']} device(s)", required=True,
                  seconds=res["seconds"], report=report)


def smoke(r, backend, cpu):
    """One small attention layer compiled and run: the first step that asks XLA
    to compile for the device (doctor only opens the client), so a missing
    libdevice or ptxas shows here, and is retried with --xla_gpu_cuda_data_dir."""
    n = max(r.p["attention_n"][0], 2 * r.p["attention_window"])  # local needs n > window
    cmd = ecpi(r, "bench", "attention", "models=local", f"n={n}", "runs=1", f"window={r.p['attention_window']}",
               "backend=" + backend, "--json")
    res = run_cmd(r, cmd, r.cap(120), env=r.env)
    tried = []
    if res["rc"] != 0 and not cpu and "XLA_FLAGS" not in os.environ and not res["timed_out"]:
        for data_dir in cuda_data_dirs():
            tried.append(data_dir)
            env = dict(r.env, XLA_FLAGS=f"--xla_gpu_cuda_data_dir={data_dir}")
            res = run_cmd(r, cmd, r.cap(120), env=env)
            if res["rc"] == 0:
                r.env = env
                break
    cells = [x for x in res["json"] if "ms" in x]
    if res["rc"] != 0 or not cells:
        return r.step("smoke", "failed", f"local attention at n={n} does not compile or run on {backend}: {err_line(res)}",
                      required=True, seconds=res["seconds"], cuda_data_dirs_tried=tried, stderr_tail=res["stderr"][-3000:])
    why = f"local attention n={n}: {cells[0]['ms']:.2f} ms, compile {cells[0]['compile_ms']:.0f} ms"
    if tried:
        why += f" (with XLA_FLAGS={r.env.get('XLA_FLAGS')})"
    return r.step("smoke", "ok", why, required=True, seconds=res["seconds"], result=cells[0],
                  xla_flags=r.env.get("XLA_FLAGS"))


TEST_LINE = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+) \(([\d.]+)s\)")


RUN_LINE = re.compile(r"^=== (?:RUN|CONT)\s+(\S+)")


def parse_tests(out):
    """Each test's verdict, and the first messages of the failed ones: with -test.v a
    test's messages come after its '=== RUN' line and before its verdict."""
    results, messages, current = [], {}, None
    for line in out.splitlines():
        m = TEST_LINE.match(line)
        if m:
            results.append(dict(test=m.group(2), status=m.group(1), seconds=float(m.group(3))))
            continue
        m = RUN_LINE.match(line)
        if m:
            current = m.group(1)
        elif current and ("_test.go:" in line or line.startswith("panic")):
            messages.setdefault(current, []).append(line.strip()[:300])
    failed = [x["test"] for x in results if x["status"] == "FAIL"]
    # The innermost failed tests carry the messages; their parents only repeat the verdict.
    failures = {t: messages.get(t, [])[:3] for t in failed if not any(f.startswith(t + "/") for f in failed)}
    return results, failures


def tests(r, backend, cpu):
    binary = r.binaries["models.test"]
    listed = run_cmd(r, [binary, "-test.list", r.p["tests"]], 30, cwd=os.path.join(ROOT, "models"), quiet=True)
    names = [l for l in listed["stdout"].split() if l.startswith("Test")]
    if not names:
        return r.step("tests", "failed", f"no test of models.test matches {r.p['tests']!r}", required=True)
    timeout = r.cap(r.p["tests_timeout"])
    env = dict(r.env, GOMLX_BACKEND=backend)
    # Tests read models/testdata relative to their package folder, as `go test` runs them.
    cmd = [binary, "-test.run", r.p["tests"], "-test.v", "-test.count=1", f"-test.timeout={max(int(timeout) - 5, 5)}s"]
    res = run_cmd(r, cmd, timeout, env=env, cwd=os.path.join(ROOT, "models"))
    results, failures = parse_tests(res["stdout"])
    top = [x for x in results if "/" not in x["test"]]
    counts = {s: sum(1 for x in results if x["status"] == s) for s in ("PASS", "FAIL", "SKIP")}
    data = dict(tests=names, counts=counts, top=top, failures=failures, seconds=res["seconds"])
    if res["rc"] == 0 and counts["FAIL"] == 0 and top:
        return r.step("tests", "ok", f"{counts['PASS']} passed ({len(top)} tests and their subtests: {', '.join(names)})",
                      required=True, **data)
    why = (f"{counts['FAIL']} failed, {counts['PASS']} passed" if results else err_line(res))
    if res["timed_out"]:
        why = f"timed out after {res['seconds']:.0f}s with {counts['PASS']} passed, {counts['FAIL']} failed"
    first = next(iter(failures.items()), None)
    if first:
        why += f"; first: {first[0]}: {first[1][0] if first[1] else ''}"
    rec = r.step("tests", "failed", why, required=True, output_tail=res["stdout"][-4000:], **data)
    failed_top = sorted({x["test"].split("/")[0] for x in results if x["status"] == "FAIL"})
    if not cpu and failed_top and r.left() > 60:
        # go-xla turns TF32 on for CUDA (a 10-bit mantissa), the tests allow 1e-4: the same tests with it
        # off tell a precision setting apart from a wrong result.
        cmd = [binary, "-test.run", "^(" + "|".join(failed_top) + ")$", "-test.v", "-test.count=1"]
        res = run_cmd(r, cmd, r.cap(r.p["tests_timeout"] / 2), env=dict(env, GOMLX_BACKEND=backend + ",tf32=false"),
                      cwd=os.path.join(ROOT, "models"))
        results, failures = parse_tests(res["stdout"])
        counts = {s: sum(1 for x in results if x["status"] == s) for s in ("PASS", "FAIL", "SKIP")}
        status = "ok" if res["rc"] == 0 and counts["FAIL"] == 0 and results else "failed"
        r.step("tests_tf32_off", status, f"the failed tests again with tf32=false: {counts['PASS']} passed, "
               f"{counts['FAIL']} failed" + ("" if results else f" ({err_line(res)})"), counts=counts,
               failures=failures, seconds=res["seconds"])
    return rec


def ecpi_error(res):
    """(family, n, message) from ecpi's 'ecpi: [variant ]F at n=N: message' line, else (None, None, why)."""
    for line in reversed(res["stderr"].splitlines()):
        m = re.search(r"ecpi: (?:variant )?(\w+) at n=(\d+): (.*)", line)
        if m:
            return m.group(1), int(m.group(2)), m.group(3)[:400]
    return None, None, err_line(res)


def classify(message):
    low = message.lower()
    if "resource_exhausted" in low or "out of memory" in low or "oom" in low.split():
        return "out of device memory"
    if "this model needs about" in low:
        return "refused by ecpi's memory estimate (host memory, train.CheckMemory)"
    if "timed out" in low:
        return "timed out"
    return "failed"


def bench_train(r, backend):
    start, budget_end = time.time(), time.time() + r.p["train_budget"]
    bf16 = "precision=" in getattr(r, "help_train", "")
    precisions = ["f32"] + (["bf16"] if bf16 else [])
    cells = []
    # Family by family, both sizes each: if time runs out, the families measured are measured whole.
    for precision in precisions:
        for family in r.p["train_families"]:
            for size in r.p["train_sizes"]:
                cell = dict(family=family, size=size, precision=precision)
                timeout = r.cap(min(budget_end - time.time(), 90))
                if timeout < 5:
                    cells.append(dict(cell, status="skipped", why="the step's time budget is spent"))
                    continue
                cmd = ecpi(r, "bench", "train", f"model={family}", f"size={size}", f"steps={r.p['train_steps']}",
                           "backends=" + backend, "--json")
                if precision != "f32":
                    cmd.insert(-1, "precision=" + precision)
                res = run_cmd(r, cmd, timeout, env=r.env)
                rows = [x for x in res["json"] if "tokens_per_s" in x]
                if res["rc"] == 0 and rows:
                    cells.append(dict(cell, status="ok", **rows[0]))
                else:
                    message = err_line(res)
                    cells.append(dict(cell, status="failed", why=message, kind=classify(message)))
    failed = [c for c in cells if c["status"] == "failed" and c["precision"] == "f32"]
    skipped = [c for c in cells if c["status"] == "skipped"]
    status = "failed" if failed else ("ok" if any(c["status"] == "ok" for c in cells) else "skipped")
    why = ", ".join(f"{c['family']}/{c['size']}/{c['precision']} {c['tokens_per_s']:,.0f} tok/s"
                    for c in cells if c["status"] == "ok")
    if failed:
        why = f"{len(failed)} failed (first: {failed[0]['family']}/{failed[0]['size']}: {failed[0]['why']}); " + why
    if skipped:
        why += f"; {len(skipped)} skipped for time"
    rec = r.step("bench_train", status, why, required=True, seconds=time.time() - start, cells=cells)
    if bf16:
        bf = [c for c in cells if c["precision"] == "bf16"]
        r.step("bench_train_bf16", "ok" if all(c["status"] == "ok" for c in bf) else "failed",
               f"{sum(c['status'] == 'ok' for c in bf)} of {len(bf)} cells", cells=bf)
    else:
        r.step("bench_train_bf16", "skipped", "not available: `ecpi bench train` has no precision= option in this build")
    return rec


def bench_attention(r, backend):
    """Per family, one process over every n (one CUDA start-up per family, not per
    cell), n rising; the first failure ends the family and is recorded with why."""
    start = time.time()
    budget_end = start + r.p["attention_budget"]
    families, lengths = r.p["attention_families"], r.p["attention_n"]
    cells, longest = [], {}
    for i, family in enumerate(families):
        # An equal share of what is left, so a slow family cannot starve the ones after it.
        family_end = time.time() + (budget_end - time.time()) / (len(families) - i)
        todo = list(lengths)
        while todo:
            timeout = r.cap(family_end - time.time())
            if timeout < 5:
                cells += [dict(variant=family, n=n, status="skipped", why="the step's time budget is spent") for n in todo]
                break
            cmd = ecpi(r, "bench", "attention", f"models={family}", "n=" + ",".join(map(str, todo)),
                       f"runs={r.p['attention_runs']}", f"window={r.p['attention_window']}", "backend=" + backend, "--json")
            res = run_cmd(r, cmd, timeout, env=r.env)
            done = {x["n"]: x for x in res["json"] if x.get("variant") == family and "ms" in x}
            for n in todo:
                if n in done:
                    cells.append(dict(status="ok", **done[n]))
                    longest[family] = n
            rest = [n for n in todo if n not in done]
            if res["rc"] == 0 or not rest:
                break
            _, failed_n, message = ecpi_error(res)
            if res["timed_out"]:
                failed_n, message = rest[0], f"timed out: the family's share of the step ({timeout:.0f}s) was spent"
            kind = classify(message)
            if failed_n not in rest:
                failed_n = rest[0]
            if kind.startswith("refused") and not done:
                # ecpi checks every n before running any: run the ones below the refused length again.
                cells += [dict(variant=family, n=n, status="refused", why=message, kind=kind) for n in rest if n >= failed_n]
                todo = [n for n in rest if n < failed_n]
                continue
            cells.append(dict(variant=family, n=failed_n, status="failed", why=message, kind=kind))
            cells += [dict(variant=family, n=n, status="not tried", why=f"after n={failed_n} failed")
                      for n in rest if n > failed_n]
            break
    cells.sort(key=lambda c: (families.index(c["variant"]), c["n"]))
    first = lengths[0]
    broken = [f for f in families if not any(c["variant"] == f and c["n"] == first and c["status"] == "ok" for c in cells)]
    status = "failed" if broken else "ok"
    why = ", ".join(f"{f} up to n={longest.get(f, '—')}" for f in families)
    if broken:
        why = f"{', '.join(broken)} failed at the shortest n={first}; " + why
    return r.step("bench_attention", status, why, required=True, seconds=time.time() - start, cells=cells,
                  longest_n=longest)


def bench_generate(r, backend):
    """One process for every family; a family that fails is recorded and the rest run again without it."""
    start = time.time()
    budget_end = start + r.p["generate_budget"]
    families, lengths = list(r.p["generate_families"]), r.p["generate_n"]
    cells, failed = [], []
    while families:
        timeout = r.cap(budget_end - time.time())
        if timeout < 5:
            cells += [dict(family=f, status="skipped", why="the step's time budget is spent") for f in families]
            break
        cmd = ecpi(r, "bench", "generate", "models=" + ",".join(families), "n=" + ",".join(map(str, lengths)),
                   f"tokens={r.p['generate_tokens']}", "backend=" + backend, "--json")
        res = run_cmd(r, cmd, timeout, env=r.env)
        rows = [x for x in res["json"] if "tokens_per_s" in x]
        cells += [dict(status="ok", **x) for x in rows]
        complete = {f for f in families if sum(1 for x in rows if x["family"] == f) == len(lengths)}
        if res["rc"] == 0:
            break
        family, n, message = ecpi_error(res)
        if res["timed_out"]:
            pending = [f for f in families if f not in complete]
            cells += [dict(family=f, status="skipped", why=f"timed out ({timeout:.0f}s)") for f in pending]
            break
        if family not in families:
            cells.append(dict(family=",".join(families), status="failed", why=message, kind=classify(message)))
            failed.append(",".join(families))
            break
        cells.append(dict(family=family, n=n, status="failed", why=message, kind=classify(message)))
        failed.append(family)
        families = [f for f in families if f not in complete and f != family]
    status = "failed" if failed else "ok"
    why = ", ".join(f"{c['family']} n={c['n']} {c['tokens_per_s']:,.0f} tok/s" for c in cells if c["status"] == "ok")
    if failed:
        why = f"failed: {', '.join(failed)}; " + why
    return r.step("bench_generate", status, why, required=True, seconds=time.time() - start, cells=cells)


def fused_attention(r, backend, cpu):
    """One attention layer in bf16, the backend's fused op (fused=dense for full, fused=masked for the
    masked families) against ecpi's own form (fused=off), each result saying which form ran and why.
    On the CPU every form must be the own one; on the GPU full must run fused. Reported, not required."""
    start = time.time()
    budget_end = start + r.p["fused_budget"]
    cells = []
    for family in r.p["fused_families"]:
        for mode in ["dense" if family == "full" else "masked", "off"]:
            cell = dict(variant=family, fused=mode)
            timeout = r.cap(min(budget_end - time.time(), 60))
            if timeout < 5:
                cells.append(dict(cell, status="skipped", why="the step's time budget is spent"))
                continue
            cmd = ecpi(r, "bench", "attention", f"models={family}", "n=" + ",".join(map(str, r.p["fused_n"])),
                       f"runs={r.p['attention_runs']}", f"window={r.p['attention_window']}", "precision=bf16",
                       f"fused={mode}", "backend=" + backend, "--json")
            res = run_cmd(r, cmd, timeout, env=r.env)
            rows = [x for x in res["json"] if x.get("variant") == family and "ms" in x]
            cells += [dict(cell, status="ok", **x) for x in rows]
            if res["rc"] != 0:
                message = ecpi_error(res)[2]
                cells.append(dict(cell, status="failed", why=message, kind=classify(message)))
    for mode in ["dense", "off"] if r.p["fused_train"] else []:
        cell = dict(variant="train", fused=mode, options=" ".join(r.p["fused_train"]))
        timeout = r.cap(min(budget_end - time.time(), 60))
        if timeout < 10:
            cells.append(dict(cell, status="skipped", why="the step's time budget is spent"))
            continue
        cmd = ecpi(r, "train", *r.p["fused_train"], "data=opticks", "precision=bf16", "dropout=0", "eval_every=0",
                   "eval_batches=1", f"fused={mode}", "backend=" + backend, "--json")
        res = run_cmd(r, cmd, timeout, env=r.env)
        rows = [x for x in res["json"] if "tokens_per_s" in x]
        if res["rc"] == 0 and rows:
            # A run does not say which form its layers ran: ChooseFused's rules (bf16, no dropout, heads of 64) pick
            # the fused op for fused=dense on CUDA, and fused_attention's layers above show it does.
            cells.append(dict(cell, status="ok", n=int(rows[-1]["config"]["n"]), ms=rows[-1]["ms_per_step"],
                              form=None, tokens_per_s=rows[-1]["tokens_per_s"],
                              compile_ms=rows[-1]["compile_ms"], train_loss=rows[-1]["train_loss"]))
        else:
            message = err_line(res)
            cells.append(dict(cell, status="failed", why=message, kind=classify(message)))
    own = {(c["variant"], c["n"]): c for c in cells if c["status"] == "ok" and c["fused"] == "off"}
    comparisons = []
    for c in cells:
        base = own.get((c["variant"], c.get("n")))
        if c["status"] == "ok" and c["fused"] != "off" and base:
            # >= 1: the fused op is at least as fast as ecpi's own form.
            comparisons.append(dict(variant=c["variant"], n=c["n"], fused=c["fused"], form=c.get("form"), form_why=c.get("form_why"),
                                    fused_ms=c["ms"], own_ms=base["ms"], speedup=base["ms"] / c["ms"]))
    failed = [c for c in cells if c["status"] == "failed"]
    if cpu:
        wrong = [c for c in cells if c["status"] == "ok" and c["variant"] != "train" and c.get("form") != "own"]
        expect = "every form ecpi's own on the CPU"
    else:
        wrong = [c for c in cells if c["status"] == "ok" and c["variant"] == "full" and c["fused"] == "dense"
                 and c.get("form") != "fused"]
        expect = "full in bf16 runs cuDNN's fused attention"
    status = "failed" if failed or wrong or not comparisons else "ok"
    why = ", ".join(f"{x['variant']} n={x['n']} fused={x['fused']} ran {x['form'] or '(unreported)'}: x{x['speedup']:.2f}"
                    for x in comparisons)
    if wrong:
        why = f"not {expect}: {wrong[0]['variant']} ran {wrong[0].get('form')} ({wrong[0].get('form_why')}); " + why
    if failed:
        why = f"{len(failed)} failed (first: {failed[0]['variant']} fused={failed[0]['fused']}: {failed[0]['why']}); " + why
    return r.step("fused_attention", status, why, seconds=time.time() - start, cells=cells, comparisons=comparisons)


def bench_presets(r, backend, cpu):
    """`bench train preset=NAME` for each paper preset, one process each, in the profile's order: tokens/s,
    compile time, XLA's planned device memory and the paper-mode schedule on 1 and preset_devices devices.
    Shrunk on the CPU (said in why). Reported, not required: a preset too large for the device is a finding."""
    start = time.time()
    if "preset=" not in getattr(r, "help_train", ""):
        return r.step("bench_presets", "skipped", "not available: `ecpi bench train` has no preset= option in this build")
    budget_end = start + r.p["preset_budget"]
    shrink = r.p["preset_shrink"]
    cells = []
    for preset in r.p["presets"]:
        timeout = r.cap(min(budget_end - time.time(), r.p["preset_timeout"]))
        if timeout < 10:
            cells.append(dict(preset=preset, status="skipped", why="the step's time budget is spent"))
            continue
        cmd = ecpi(r, "bench", "train", f"preset={preset}", f"steps={r.p['preset_steps']}",
                   f"devices={r.p['preset_devices']}", *shrink, "backends=" + backend, "--json")
        res = run_cmd(r, cmd, timeout, env=r.env)
        rows = [x for x in res["json"] if x.get("preset") == preset]
        if res["rc"] == 0 and rows:
            cells.append(dict(status="ok", **rows[0]))
        else:
            message = err_line(res)
            cells.append(dict(preset=preset, status="failed", why=message, kind=classify(message)))
    ok = [c for c in cells if c["status"] == "ok"]
    failed = [c for c in cells if c["status"] == "failed"]
    status = "failed" if failed or not ok else "ok"
    why = ", ".join(f"{c['preset']} {c['tokens_per_s']:,.0f} tok/s, {c.get('memory_mib', 0) / 1024:.1f} GiB, "
                    f"schedule {c['hours']:.1f} h ({c.get('hours_on_devices', 0):.1f} h on {c.get('devices', 1)})" for c in ok)
    if failed:
        why = f"{len(failed)} failed (first: {failed[0]['preset']}: {failed[0]['kind']}: {failed[0]['why']}); " + why
    if shrink:
        why = f"shrunk on the CPU ({' '.join(shrink)}): not the presets' cost; {', '.join(r.p['presets'])} only; " + why
    skipped = [c["preset"] for c in cells if c["status"] == "skipped"]
    if skipped:
        why += f"; skipped for time: {', '.join(skipped)}"
    return r.step("bench_presets", status, why, seconds=time.time() - start, cells=cells, shrunk=shrink)


# ---------------------------------------------------------------------------
# The PyTorch twins
# ---------------------------------------------------------------------------


def peer(r, cpu):
    start = time.time()
    probe = run_cmd(r, [sys.executable, "-c", "import json, torch; print(json.dumps(dict(torch=torch.__version__, "
                        "cuda=torch.cuda.is_available(), name=torch.cuda.get_device_name() if torch.cuda.is_available() else None)))"],
                    r.cap(90), quiet=True)
    info = probe["json"][0] if probe["json"] else None
    if not info:
        return r.step("peer", "skipped", f"{sys.executable} has no working torch: {err_line(probe)}",
                      seconds=time.time() - start)
    device = r.p["peer_device"]
    if device == "cuda" and not info["cuda"]:
        return r.step("peer", "skipped", f"torch {info['torch']} sees no CUDA device", seconds=time.time() - start,
                      torch=info)
    jobs = [["peak", f"--size={r.p['peer_peak_size']}", f"--runs={r.p['peer_runs'] * 3}"]]
    for size in r.p["peer_sizes"]:
        for family in [f for f in r.p["train_families"] if f in TWIN_FAMILIES]:
            jobs.append(["train", f"--family={family}", f"--size={size}", f"--steps={r.p['peer_steps']}", "--modes=eager"])
    for n in r.p["peer_attention_n"]:
        for variant in r.p["attention_families"]:
            jobs.append(["attention", f"--variant={variant}", f"--n={n}", f"--runs={r.p['peer_runs']}",
                         f"--window={r.p['attention_window']}", "--impls=matmul,sdpa", "--modes=eager"])
    cmd = [sys.executable, os.path.join(HERE, "peer_device.py"), "--device", device,
           "--matmul-precision", r.p["peer_matmul_precision"], "--jobs", json.dumps(jobs)]
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONWARNINGS="ignore")
    res = run_cmd(r, cmd, r.cap(r.p["peer_budget"]), env=env)
    rows = res["json"]
    ok = [x for x in rows if not x.get("error")]
    errors = [x for x in rows if x.get("error")]
    done = {x["job"] for x in rows}
    not_run = [jobs[i] for i in range(len(jobs)) if i not in done]
    status = "failed" if errors or not ok else "ok"  # jobs cut by the time budget are noted, not failed
    why = f"torch {info['torch']} on {info.get('name') or device}: {len(ok)} measurement(s)"
    if errors:
        why += f", {len(errors)} error(s) (first: {errors[0].get('error')})"
    if not_run:
        why += f", {len(not_run)} job(s) not run ({'timed out' if res['timed_out'] else err_line(res)})"
    return r.step("peer", status, why, seconds=time.time() - start, torch=info, results=rows, not_run=not_run)


# ---------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------


def summary(r, cpu):
    by = {s["step"]: s for s in r.steps}
    rows = []
    twins = {}
    peer_rows = by.get("peer", {}).get("results", []) or []
    for x in peer_rows:
        if x.get("work") == "train" and x.get("tokens_per_s"):
            twins[("train", x["family"], x["size"])] = x
        if x.get("work") == "attention" and x.get("ms") is not None:
            key = ("attention", x["variant"], x["n"])
            if key not in twins or x["ms"] < twins[key]["ms"]:
                twins[key] = x
    peak = next((x for x in peer_rows if x.get("work") == "peak"), None)
    for c in by.get("bench_train", {}).get("cells", []):
        if c["status"] != "ok":
            continue
        row = dict(work="train", family=c["family"], size=c["size"], precision=c["precision"],
                   ecpi_tokens_per_s=c["tokens_per_s"], ecpi_ms_per_step=c["ms_per_step"])
        twin = twins.get(("train", c["family"], c["size"]))
        if twin:
            row["torch_tokens_per_s"] = twin["tokens_per_s"]
            row["ratio"] = c["tokens_per_s"] / twin["tokens_per_s"]  # >= 1: ecpi at least as fast
            if twin.get("flops_per_step"):
                tokens_per_step = twin["tokens_per_s"] * twin["ms_per_step"] / 1000
                tflops = twin["flops_per_step"] * c["tokens_per_s"] / tokens_per_step / 1e12
                row["ecpi_tflops"] = tflops
                if not cpu:
                    row["share_of_peak"] = {k: tflops / v for k, v in H200_PEAK_TFLOPS.items()}
        rows.append(row)
    for c in by.get("bench_attention", {}).get("cells", []):
        twin = twins.get(("attention", c["variant"], c["n"]))
        if c["status"] == "ok" and twin:
            rows.append(dict(work="attention", variant=c["variant"], n=c["n"], ecpi_ms=c["ms"], torch_ms=twin["ms"],
                             torch_form=twin["impl"], ratio=twin["ms"] / c["ms"]))  # >= 1: ecpi at least as fast
    # Forward+backward of one layer: q·kᵀ and weights·v (2 FLOPs a multiply-add each) for every scored
    # pair, about 3x for the backward pass; bench attention's batch 2, 4 heads of 32.
    attention_tflops = {}
    for c in by.get("bench_attention", {}).get("cells", []):
        if c["status"] == "ok" and c.get("pairs") and c.get("ms"):
            attention_tflops[c["variant"]] = dict(n=c["n"], tflops=12 * 32 * 4 * 2 * c["pairs"] / (c["ms"] / 1000) / 1e12)
    failed_required = [s["step"] for s in r.steps if s["required"] and s["status"] == "failed"]
    fused = by.get("fused_attention", {}).get("comparisons", [])
    presets = [dict(preset=c["preset"], tokens_per_s=c["tokens_per_s"], compile_ms=c["compile_ms"], memory_mib=c.get("memory_mib"),
                    schedule_tokens=c["schedule_tokens"], hours=c["hours"], devices=c.get("devices"),
                    hours_on_devices=c.get("hours_on_devices"), shrunk=c.get("shrunk"))
               for c in by.get("bench_presets", {}).get("cells", []) if c["status"] == "ok"]
    rec = dict(kind="summary", profile=r.profile, seconds=round(time.time() - r.start, 1),
               status="failed" if failed_required else "ok", failed_required=failed_required,
               steps={s["step"]: s["status"] for s in r.steps},
               longest_n=by.get("bench_attention", {}).get("longest_n"), attention_tflops_at_longest_n=attention_tflops,
               comparisons=rows, fused_vs_own=fused, presets=presets,
               torch_peak=peak, peaks_tflops=None if cpu else H200_PEAK_TFLOPS)
    r.write(rec)
    r.log("")
    r.log(f"summary ({r.profile}, {rec['seconds']:.0f}s):")
    for s in r.steps:
        r.log(f"  {s['step']:<17} {s['status']:<8} {s['why'][:220]}")
    for family, x in attention_tflops.items():
        r.log(f"  attention {family}: longest n={x['n']}, {x['tflops']:.2f} TFLOP/s there")
    for row in rows:
        if row["work"] == "train":
            extra = f", {row['ecpi_tflops']:.2f} TFLOP/s" if "ecpi_tflops" in row else ""
            torch = f", PyTorch {row['torch_tokens_per_s']:,.0f} (x{row['ratio']:.2f})" if "ratio" in row else ""
            r.log(f"  train {row['family']}/{row['size']}/{row['precision']}: {row['ecpi_tokens_per_s']:,.0f} tok/s{extra}{torch}")
        else:
            r.log(f"  attention {row['variant']} n={row['n']}: ecpi {row['ecpi_ms']:.2f} ms, PyTorch {row['torch_ms']:.2f} ms "
                  f"({row['torch_form']}) x{row['ratio']:.2f}")
    for x in fused:
        r.log(f"  fused={x['fused']} {x['variant']} n={x['n']}: ran {x['form'] or '(unreported)'}, {x['fused_ms']:.2f} ms; fused=off {x['own_ms']:.2f} ms "
              f"(x{x['speedup']:.2f})")
    for x in presets:
        on = f", {x['hours_on_devices']:.1f} h on {x['devices']} (linear scaling)" if x.get("hours_on_devices") else ""
        r.log(f"  preset {x['preset']}{' (shrunk)' if x['shrunk'] else ''}: {x['tokens_per_s']:,.0f} tok/s, compile "
              f"{x['compile_ms'] / 1000:.1f} s, {(x['memory_mib'] or 0) / 1024:.2f} GiB planned; schedule {x['hours']:.1f} h on one device{on}")
    r.log("RESULT: " + ("ok" if not failed_required else f"FAILED ({', '.join(failed_required)})")
          + f" — {os.path.join(r.out_dir, 'results.jsonl')}")
    return rec


def parse_set(p, items):
    for item in items:
        key, _, value = item.partition("=")
        if key not in p:
            sys.exit(f"--set {item}: unknown setting {key!r} (known: {', '.join(sorted(p))})")
        old = p[key]
        if isinstance(old, list):
            p[key] = [type(old[0])(v) if old else v for v in value.split(",") if v]
        elif isinstance(old, bool):
            p[key] = value.lower() in ("1", "true", "yes")
        else:
            p[key] = type(old)(value)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu", action="store_true", help="the CPU half: backend xla:cpu, tiny sizes")
    ap.add_argument("--carry", default=os.path.join(HERE, "carry"), help="what `prepare` built")
    ap.add_argument("--out", help="results folder (default: $OUT if set, else bench/gpu/results/<date>-<host>[-cpu])")
    ap.add_argument("--cpu-plugin", help="the XLA CPU plugin for --cpu (default: $ECPI_HOME/xla/pjrt_c_api_cpu_plugin.so)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a setting of the profile")
    a = ap.parse_args()
    profile = "cpu" if a.cpu else "gpu"
    p = json.loads(json.dumps(PROFILES[profile]))
    parse_set(p, a.set)
    out = a.out or os.environ.get("OUT") or os.path.join(
        HERE, "results", datetime.datetime.now().strftime("%Y-%m-%d-%H%M%S") + "-" + re.sub(r"[^\w.-]", "_", socket.gethostname())
        + ("-cpu" if a.cpu else ""))
    r = Run(out, profile, p)
    r.args, r.env = a, dict(os.environ)
    r.real_home = os.environ.get("ECPI_HOME") or os.path.expanduser("~/.ecpi")
    work = tempfile.mkdtemp(prefix="ecpi-gpu-check-")
    try:
        manifest = environment(r, a.carry)
        # ecpi reads its corpus from ECPI_HOME; the carried one, in a home of the run's own, never installs
        # anything (no network there) and leaves the machine's ~/.ecpi alone.
        home = os.path.join(work, "home")
        os.makedirs(os.path.join(home, "data"))
        if os.path.isdir(os.path.join(a.carry, "home", "data")):
            for name in os.listdir(os.path.join(a.carry, "home", "data")):
                shutil.copytree(os.path.join(a.carry, "home", "data", name), os.path.join(home, "data", name))
        # GOPJRT_CUDA_CHECKS=0: go-xla looks for nvidia/ beside the plugin's folder (its own installer's
        # layout), warns on every start when it is not there, and the smoke step handles the CUDA data dir.
        r.env.update(ECPI_HOME=home, ECPI_NO_XLA_INSTALL="1", GOMLX_NO_AUTO_INSTALL="1", GOPJRT_CUDA_CHECKS="0")
        r.env.pop("GOMLX_BACKEND", None)
        if unpack(r, a.carry, work, manifest)["status"] == "ok":
            rec, plugin = plugin_step(r, a.cpu, work, manifest)
            backend = "xla:" + plugin if plugin else None
            steps = [lambda: doctor(r, backend), lambda: smoke(r, backend, a.cpu), lambda: tests(r, backend, a.cpu),
                     lambda: bench_train(r, backend), lambda: bench_attention(r, backend), lambda: bench_generate(r, backend),
                     lambda: fused_attention(r, backend, a.cpu), lambda: bench_presets(r, backend, a.cpu)]
            names = ["doctor", "smoke", "tests", "bench_train", "bench_attention", "bench_generate", "fused_attention",
                     "bench_presets"]
            usable = backend is not None
            for i, (name, run_step) in enumerate(zip(names, steps)):
                if not usable:
                    r.step(name, "skipped", "the backend is not usable (see the steps above)", required=True)
                    continue
                # doctor and smoke gate the rest: without a client or a compiled graph nothing else can run.
                if run_step()["status"] != "ok" and i < 2:
                    usable = False
        peer(r, a.cpu)
    except Exception as e:  # the results file must say what broke, whatever broke
        import traceback
        r.step("check", "failed", f"the check itself failed: {type(e).__name__}: {e}", required=True,
               traceback=traceback.format_exc())
    finally:
        rec = summary(r, a.cpu)
        shutil.rmtree(work, ignore_errors=True)
    # Skipped required steps (backend unusable) count as failures: nothing was shown to work.
    bad = rec["failed_required"] or [s["step"] for s in r.steps if s["required"] and s["status"] == "skipped"]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
