package main

// Before the Go runtime starts any thread, a process that is going to
// supervise a child (see supervise: not the child itself, and not the REPL on
// a terminal) keeps glibc's malloc to one arena. Otherwise each thread that
// cgo starts reserves an arena of its own (64 MiB of address space), and under
// an address-space limit (ulimit -v, as on shared clusters) the supervisor of
// a child near that limit failed to start a thread in about one run of four
// (tests/crash_test.go). The supervisor only copies the child's stderr; the
// child, which does the work, keeps glibc's default.

/*
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void ecpiSupervisorArenas(int argc, char **argv, char **envp) {
	if (getenv("ECPI_SUPERVISED") == NULL && (argc > 1 || !isatty(0))) {
		mallopt(M_ARENA_MAX, 1);
	}
}
*/
import "C"
