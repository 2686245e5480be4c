package xla

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestMallocEnv(t *testing.T) {
	modes := filepath.Join(t.TempDir(), "enabled")
	defer func(path string) { hugePagesPath = path }(hugePagesPath)
	hugePagesPath = modes
	for _, c := range []struct {
		name, kernel string
		environ      []string
		want         []string // nil: unchanged
	}{
		{"added", "always [madvise] never", []string{"HOME=/h"}, []string{"HOME=/h", "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"}},
		{"appended to the user's tunables", "[always] madvise never", []string{"GLIBC_TUNABLES=glibc.malloc.arena_max=2", "A=b"},
			[]string{"GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", "A=b"}},
		{"the user's own setting stays", "always [madvise] never", []string{"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"}, nil},
		{"no huge pages in this kernel", "always madvise [never]", []string{"HOME=/h"}, nil},
		{"no huge pages file", "", []string{"HOME=/h"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(modes)
			if c.kernel != "" {
				if err := os.WriteFile(modes, []byte(c.kernel+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := slices.Clone(c.environ)
			got, changed := MallocEnv(c.environ)
			if !slices.Equal(c.environ, before) {
				t.Fatalf("MallocEnv changed its argument: %q", c.environ)
			}
			if c.want == nil {
				if changed || !slices.Equal(got, c.environ) {
					t.Fatalf("got %q (changed %v), want the environment unchanged", got, changed)
				}
				return
			}
			if !changed || !slices.Equal(got, c.want) {
				t.Fatalf("got %q (changed %v), want %q", got, changed, c.want)
			}
		})
	}
}
