package xla

import (
	"os"
	"strings"
)

// XLA's CPU runtime takes every buffer of an execution from malloc and gives it back at the end.
// glibc serves blocks above 32 MB with a fresh mmap each time, so each execution faults in those
// blocks again, one 4 KB page at a time: local attention's forward+backward at n = 4096 took
// 54,000 page faults per step and spent 40 % of its time in the kernel. Asking glibc to map them
// with transparent huge pages (glibc.malloc.hugetlb=1, glibc ≥ 2.35) cuts the faults 40-fold and
// the step time by a third; peak memory is unchanged. glibc reads its tunables only when a process
// starts, so ecpi restarts itself once with them ([MallocEnv]).

// mallocTunable is the glibc tunable ecpi adds; a GLIBC_TUNABLES that already names it (to 0, say)
// is the user's choice and stays.
const mallocTunable = "glibc.malloc.hugetlb"

// hugePagesPath says whether the kernel offers transparent huge pages at all.
var hugePagesPath = "/sys/kernel/mm/transparent_hugepage/enabled"

// MallocEnv returns environ with glibc's malloc set to ask for transparent huge pages, and
// whether it had to change anything: false when GLIBC_TUNABLES already says what to do with
// them, or when the kernel has huge pages turned off.
func MallocEnv(environ []string) ([]string, bool) {
	modes, err := os.ReadFile(hugePagesPath)
	if err != nil || strings.Contains(string(modes), "[never]") {
		return environ, false
	}
	const key = "GLIBC_TUNABLES="
	for i, entry := range environ {
		value, ok := strings.CutPrefix(entry, key)
		if !ok {
			continue
		}
		if strings.Contains(value, mallocTunable+"=") {
			return environ, false
		}
		tuned := append([]string(nil), environ...)
		tuned[i] = key + joinTunables(value, mallocTunable+"=1")
		return tuned, true
	}
	return append(append([]string(nil), environ...), key+mallocTunable+"=1"), true
}

// joinTunables appends one name=value to a colon-separated GLIBC_TUNABLES value.
func joinTunables(value, tunable string) string {
	if value == "" {
		return tunable
	}
	return value + ":" + tunable
}

// MallocTuning describes this process's malloc set-up in one line, for `ecpi doctor`.
func MallocTuning() string {
	return glibcTuning() + "; " + bufferReuse()
}

func glibcTuning() string {
	tunables := os.Getenv("GLIBC_TUNABLES")
	if strings.Contains(tunables, mallocTunable+"=1") {
		return "transparent huge pages for XLA's buffers (GLIBC_TUNABLES=" + tunables + ")"
	}
	if tunables != "" {
		return "glibc's defaults for huge pages (GLIBC_TUNABLES=" + tunables + ")"
	}
	return "glibc's defaults (the kernel offers no transparent huge pages, or ecpi was not started as the ecpi binary)"
}
