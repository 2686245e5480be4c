// XLA's CPU runtime takes its large buffers from posix_memalign or aligned_alloc for every
// execution and frees them at its end. glibc maps each block above 32 MB anew, and the kernel
// zeroes every page of it again on first touch. This file keeps those blocks: the ecpi binary
// defines posix_memalign, aligned_alloc and free, which the dynamic linker then binds the XLA
// plugin's calls to; blocks of at least largeBlock bytes are mapped here, once, and reused by the
// next request of the same size, and everything else goes to glibc unchanged.
//
// Idle blocks stay mapped until a request comes that none of them fits (another graph runs), and
// never more than a quarter of physical memory: past that, the oldest idle blocks are unmapped.
// ECPI_XLA_BUFFERS=fresh turns the reuse off (every block goes to glibc).

//go:build linux && cgo

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// glibc's own entry points, which the definitions below fall back to.
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *p);

enum { maxBlocks = 512 };
static const size_t largeBlock = 32u << 20;
static const size_t hugePage = 2u << 20;

typedef struct {
  char *start;  // NULL: slot unused
  size_t size;  // a multiple of hugePage
  int inUse;
  uint64_t freedAt;  // order of release, for evicting the oldest idle block
} block;

static block blocks[maxBlocks];
static pthread_mutex_t blocksLock = PTHREAD_MUTEX_INITIALIZER;
static size_t idleBytes;
static uint64_t releases;
static int64_t mappedCount, reusedCount;
static int reuseOff;
static size_t idleLimit;  // a quarter of physical memory

__attribute__((constructor)) static void readSetting(void) {
  const char *setting = getenv("ECPI_XLA_BUFFERS");
  reuseOff = setting != NULL && strcmp(setting, "fresh") == 0;
  idleLimit = (size_t)sysconf(_SC_PHYS_PAGES) / 4 * (size_t)sysconf(_SC_PAGESIZE);
}

// mapAligned maps size bytes at a huge-page boundary, so that the kernel can back them with
// transparent huge pages.
static char *mapAligned(size_t size) {
  char *raw = mmap(NULL, size + hugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  char *start = (char *)(((uintptr_t)raw + hugePage - 1) & ~(uintptr_t)(hugePage - 1));
  if (start > raw) munmap(raw, (size_t)(start - raw));
  char *end = start + size, *rawEnd = raw + size + hugePage;
  if (rawEnd > end) munmap(end, (size_t)(rawEnd - end));
  madvise(start, size, MADV_HUGEPAGE);
  return start;
}

// releaseIdle unmaps the oldest idle blocks until at most keep bytes of them stay. Holds
// blocksLock.
static void releaseIdle(size_t keep) {
  while (idleBytes > keep) {
    int oldest = -1;
    for (int i = 0; i < maxBlocks; i++) {
      if (blocks[i].start && !blocks[i].inUse && (oldest < 0 || blocks[i].freedAt < blocks[oldest].freedAt)) oldest = i;
    }
    if (oldest < 0) return;
    munmap(blocks[oldest].start, blocks[oldest].size);
    idleBytes -= blocks[oldest].size;
    blocks[oldest] = (block){0};
  }
}

// largeAllocate returns a block of at least size bytes, an idle one of the same rounded size if
// there is one; NULL when no slot is free or the mapping fails (the caller then asks glibc).
static void *largeAllocate(size_t size) {
  size = (size + hugePage - 1) & ~(hugePage - 1);
  pthread_mutex_lock(&blocksLock);
  for (int i = 0; i < maxBlocks; i++) {
    if (blocks[i].start && !blocks[i].inUse && blocks[i].size == size) {
      blocks[i].inUse = 1;
      idleBytes -= size;
      reusedCount++;
      pthread_mutex_unlock(&blocksLock);
      return blocks[i].start;
    }
  }
  // A size no idle block has means another graph runs now: the idle blocks of the graphs
  // before go back to the system, so that only the running graph's blocks stay mapped.
  releaseIdle(0);
  int slot = -1;
  for (int i = 0; i < maxBlocks && slot < 0; i++) {
    if (!blocks[i].start) slot = i;
  }
  if (slot < 0) {
    pthread_mutex_unlock(&blocksLock);
    return NULL;
  }
  blocks[slot] = (block){.start = (char *)1, .size = size, .inUse = 1};  // reserved while mapping
  pthread_mutex_unlock(&blocksLock);
  char *start = mapAligned(size);
  pthread_mutex_lock(&blocksLock);
  if (start == NULL) {
    blocks[slot] = (block){0};
  } else {
    blocks[slot].start = start;
    mappedCount++;
  }
  pthread_mutex_unlock(&blocksLock);
  return start;
}

// largeRelease makes p's block idle and reports whether p was one of ours.
static int largeRelease(void *p) {
  pthread_mutex_lock(&blocksLock);
  for (int i = 0; i < maxBlocks; i++) {
    if (blocks[i].start == p && blocks[i].inUse) {
      blocks[i].inUse = 0;
      blocks[i].freedAt = ++releases;
      idleBytes += blocks[i].size;
      releaseIdle(idleLimit);
      pthread_mutex_unlock(&blocksLock);
      return 1;
    }
  }
  pthread_mutex_unlock(&blocksLock);
  return 0;
}

static int isLarge(size_t alignment, size_t size) {
  return !reuseOff && size >= largeBlock && alignment <= hugePage;
}

void free(void *p) {
  // Blocks of ours start at a huge-page boundary; glibc's almost never do.
  if (p != NULL && ((uintptr_t)p & (hugePage - 1)) == 0 && largeRelease(p)) return;
  __libc_free(p);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  void *p = isLarge(alignment, size) ? largeAllocate(size) : NULL;
  if (p == NULL) p = __libc_memalign(alignment, size);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
  void *p = isLarge(alignment, size) ? largeAllocate(size) : NULL;
  return p != NULL ? p : __libc_memalign(alignment, size);
}

int ecpiBuffersKept(void) { return !reuseOff; }

void ecpiBufferCounts(int64_t *mapped, int64_t *reused) {
  pthread_mutex_lock(&blocksLock);
  *mapped = mappedCount;
  *reused = reusedCount;
  pthread_mutex_unlock(&blocksLock);
}
