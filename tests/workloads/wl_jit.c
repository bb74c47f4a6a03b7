/* SPDX-License-Identifier: MIT */
/*
 * wl_jit: code generated at run time. main -> wl_outer -> wl_middle -> jit_stub -> wl_jit_target,
 * N times, where jit_stub is machine code written into an anonymous PROT_EXEC mapping and named
 * only by the perf map /tmp/perf-PID.map that the workload writes, as a JIT does. jit_stub keeps
 * a frame pointer (push %rbp; mov %rsp,%rbp) so the stack walks through it:
 *
 *   55                   push %rbp
 *   48 89 e5             mov  %rsp,%rbp
 *   48 b8 <imm64>        movabs $wl_jit_target,%rax
 *   ff d0                call *%rax
 *   5d                   pop  %rbp
 *   c3                   ret
 *
 * The uprobe of tests/e2e/jit.sh is on wl_jit_target; the perf map is removed by the test. The
 * code is unmapped before the exit, as node's is (V8 frees its heap at exit).
 * x86-64 only. Options: see wl.h.
 */
#include <stdint.h>
#include <sys/mman.h>

#include "wl.h"

#define JIT_NAME "jit_stub"

__attribute__((noinline)) void wl_jit_target(void)
{
	__asm__ __volatile__("");
}

static void (*jit_stub)(void);

__attribute__((noinline)) void wl_middle(void)
{
	jit_stub();
	__asm__ __volatile__("");	/* not a tail call */
}

__attribute__((noinline)) void wl_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		wl_middle();
}

static size_t emit_stub(uint8_t *p)
{
	uint64_t target = (uint64_t)(uintptr_t)wl_jit_target;
	size_t n = 0;

	p[n++] = 0x55;
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5;
	p[n++] = 0x48, p[n++] = 0xb8;
	memcpy(p + n, &target, sizeof(target));
	n += sizeof(target);
	p[n++] = 0xff, p[n++] = 0xd0;
	p[n++] = 0x5d;
	p[n++] = 0xc3;
	return n;
}

static int write_perf_map(uintptr_t start, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "a");
	if (!f)
		return -1;
	fprintf(f, "%lx %zx %s\n", (unsigned long)start, size, JIT_NAME);
	return fclose(f);
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t n;

	if (code == MAP_FAILED)
		return 1;
	/* Not at the start of the page: the name must come from the map, not the mapping. */
	n = emit_stub(code + 64);
	if (mprotect(code, page, PROT_READ | PROT_EXEC))
		return 1;
	jit_stub = (void (*)(void))(code + 64);
	if (write_perf_map((uintptr_t)(code + 64), n))
		return 1;
	n = wl_main(argc, argv, wl_outer);
	/* a JIT frees its code before it exits, as node does: gone from its maps at the exit */
	munmap(code, page);
	return n;
}
