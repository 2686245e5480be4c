// Package kernel is ecpi's side of the "ecpi (Go)" Jupyter kernel: the
// session server that notebook cells talk to, and the rewriting of GoNB's
// kernelspec into ecpi's.
//
// # Session server
//
// GoNB runs every cell as a process of its own, so nothing a cell builds
// (models, compiled executables, the session's settings) would outlive it.
// [Serve] keeps them: it listens on a Unix socket and runs each line a cell
// posts ([RunRequest]) in one REPL session, streaming the command's events
// back as JSON lines. `ecpi serve` starts it; package nb, which cells import,
// starts one per kernel on first use and shows what it streams. The figures
// themselves are drawn by package figure, and the commands are package repl's,
// the same ones the REPL and the CLI run.
//
// # Kernelspec
//
// [RewriteSpec] turns the kernel.json written by `gonb --install` into the
// "ecpi" kernel described by [SpecSettings]: its display name, the toolchain
// environment and GoNB's -go_work flag pointing at this repository
// (scripts/setup-kernel.sh runs it through kernel/install).
package kernel
