// Package kernel is ecpi's notebook side: the helpers a GoNB cell calls to see
// models and results, and the installer of the "ecpi (Go)" Jupyter kernel.
//
// Every figure is made here, offline, with the standard library and the Go
// fonts: attention heatmaps and index-set diagrams as PNG ([HeatmapPNG],
// [HeadsPNG], [MaskPNG]), loss and scaling curves as PNG ([Plot]),
// comparison tables ([Table]), model summaries ([Summary]) and a loss plot
// that redraws while train.Run is running ([Live]). The Show methods send
// them to the notebook through GoNB's gonbui, each with a representation that
// an untrusted notebook displays (PNG, plain text; see show.go); outside a
// notebook they do nothing, so the same code runs in tests.
//
// Training, evaluation and probes are not here: cells call package train, the
// same functions the REPL and the CLI call.
//
// [InstallSpec] turns the kernelspec written by `gonb --install` into the
// "ecpi" kernel (scripts/setup-kernel.sh runs it through kernel/install).
package kernel
