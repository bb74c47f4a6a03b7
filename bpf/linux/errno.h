/* SPDX-License-Identifier: MIT */
/*
 * linux/errno.h for BPF builds: usdt.bpf.h includes <linux/errno.h>, whose <asm/errno.h> lives in
 * the host's multiarch directory (/usr/include/x86_64-linux-gnu), which `clang -target bpf` does
 * not search. The numbers are the kernel's UAPI values (asm-generic/errno-base.h), the same on
 * every architecture stkrec builds for. bpf/ is on the include path, so this file is found first.
 */
#ifndef STK_BPF_LINUX_ERRNO_H
#define STK_BPF_LINUX_ERRNO_H

#define EPERM 1
#define ENOENT 2
#define ESRCH 3
#define EFAULT 14
#define EEXIST 17
#define EINVAL 22
#define ENOSPC 28
#define ENOMEM 12
#define E2BIG 7

#endif
