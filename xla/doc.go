// Package xla chooses and reports the compute backend ecpi's models run on.
//
// # Choice
//
// [Choose] returns a [Choice]: a ready compute.Backend plus its name ("xla:cpu", "xla:cuda",
// "go"), the plugin path, the device count, whether the binary has SIMD kernels, and a one-sentence
// reason. It tries, in order:
//
//  1. the backend the user named: the requested string (the `backend=` option), else
//     $GOMLX_BACKEND. Accepted names: "go" (tuned: [GoConfig]), "go:<gobackend options>", "xla"
//     (any installed plugin), "xla:cpu", "xla:cuda", "xla:rocm", "xla:tpu" (a platform, searched in
//     [PluginDirs] then by go-xla), "xla:/abs/path/plugin.so", each optionally followed by go-xla
//     options ("xla:cuda,preallocate=false"). A named backend that cannot load is an error that
//     names it, never a silent substitute;
//  2. an XLA PJRT plugin already installed in [PluginDirs] ($ECPI_HOME/xla first), accelerators
//     before CPU; one that fails to load is skipped and the failure goes into the reason;
//  3. a plugin it installs ([DefaultInstallers]): GoMLX's own installer where the network allows,
//     then the pinned CPU plugin wheel from PyPI ([InstallCPUPlugin]) unpacked into $ECPI_HOME/xla
//     (Python runs pip at install time only). $ECPI_NO_XLA_INSTALL=1 skips this step;
//  4. GoMLX's pure-Go backend.
//
// GoMLX's automatic plugin download never runs: this package turns it off at init, with or
// without GOMLX_NO_AUTO_INSTALL.
//
// [Available] lists every backend that can be opened here (installed plugins, then "go") without
// loading any; [Choose] opens one of them by that name. `ecpi bench train` compares them side by
// side this way.
//
// # GPU and TPU
//
// `backend=xla:cuda` (or rocm, tpu) loads pjrt_c_api_cuda_plugin.so from [PluginDirs]; GoMLX's
// installer puts it in ~/.local/lib/go-xla/nvidia together with the NVIDIA libraries from PyPI
// (jax-cuda13-pjrt): run `ecpi doctor install=cuda` ([InstallPlugin]) on a machine with the GPU.
//
// # Data parallelism
//
// [NewDataParallel] builds a one-axis device mesh over the devices of an XLA backend; its
// [DataParallel.Batch] and [DataParallel.TrainStep] run a train.Trainer step with each batch split along its first axis
// (GoMLX AutoSharding). The XLA CPU plugin exposes several host devices, so this runs on a CPU too.
//
// xla/PLUGINS.md records every CPU plugin wheel tried with go-xla v0.4.13 and the result.
package xla
