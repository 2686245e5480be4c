package nb

// The metrics of the classifier notebooks (03, 05): accuracy in percent for their tables and claims, and the error
// rate their learning-rate sweeps minimise.

import "fmt"

// Percent is a classifier's validation accuracy in %.
func Percent(r Trained) float64 { return 100 * r.Acc() }

// ErrorRate is what a classifier's sweep minimises (Experiment.Tune): the share of validation answers wrong.
func ErrorRate(r Trained) float64 { return 1 - r.Acc() }

// AsAccuracy writes a sweep's error rate as the validation accuracy in % (for Experiment.SweepTable).
func AsAccuracy(errorRate float64) string { return fmt.Sprintf("%.1f", 100*(1-errorRate)) }
