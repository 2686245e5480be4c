// Package train is everything ecpi does with a model once its family and
// options are chosen: the training loop (AdamW with decoupled decay on weight
// matrices, warm-up and schedules, gradient clipping, accumulation,
// data-parallel devices), checkpoints that resume exactly, evaluation
// (perplexity and bits per character by ecpi's protocol or the ECP authors',
// accuracy), sampling, and the probes (attention maps, gate statistics,
// receptive fields, retrieval at growing distances). It builds models through
// package models and never switches on a family: what differs between
// families comes from the registry. The REPL, the CLI and the notebooks call
// the same functions.
package train
