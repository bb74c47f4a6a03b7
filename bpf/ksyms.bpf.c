// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms.bpf.c: name kernel addresses as the kernel does, for stkrec's drains
 * (record/ksyms/ksymname.c).
 *
 * Reading /proc/kallsyms means the kernel formatting 120,000 lines and stkrec parsing them back:
 * the largest part of a short recording's CPU, for the few hundred addresses its stacks hit.
 * This program, run by stkrec with BPF_PROG_TEST_RUN, asks the kernel's own lookup (the one
 * behind %pS in its stack traces) for each address instead: name, offset and size in the symbol,
 * module. stkrec fills addrs[0, n) and reads names[]; ranges that end in a "0x..." text are
 * addresses no symbol holds. The first run also gives the kernel image's text bounds.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "stk/abi.h"

char LICENSE[] SEC("license") = "GPL";

__u64 addrs[STK_KSYMNAME_BATCH];
char names[STK_KSYMNAME_BATCH][STK_KSYMNAME_TEXT];
__u32 n;
__u64 image_lo, image_hi;	/* _stext, _etext: looked up by the first run */

static const char stext[] = "_stext", etext[] = "_etext";

SEC("syscall")
int name_addrs(void *ctx)
{
	/* once: a lookup by name scans the whole table on older kernels (6.1) */
	if (!image_hi) {
		bpf_kallsyms_lookup_name(stext, sizeof(stext), 0, &image_lo);
		bpf_kallsyms_lookup_name(etext, sizeof(etext), 0, &image_hi);
	}
	for (__u32 i = 0; i < STK_KSYMNAME_BATCH; i++) {
		if (i >= n)
			break;
		bpf_snprintf(names[i], STK_KSYMNAME_TEXT, "%pS", &addrs[i], sizeof(addrs[i]));
	}
	return 0;
}
