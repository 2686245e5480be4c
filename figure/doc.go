// Package figure draws what ecpi shows in notebooks, offline, with
// gonum/plot and the Liberation fonts it embeds: loss and scaling curves
// ([Plot], as PNG and SVG), tables ([Table]), attention heatmaps with a
// colour bar ([HeadsPNG]), index-set diagrams ([IndexSetPNG]), data examples
// ([ImagesPNG]) and a loss plot that redraws while a run trains ([Live]). The
// Show functions send them to the notebook through GoNB's gonbui, each with a
// representation that an untrusted notebook displays (PNG, plain text; see
// show.go); outside a notebook they do nothing.
//
// It depends on nothing heavy (no GoMLX), so notebook cells that import it,
// and package nb, compile and start in about a second.
package figure
