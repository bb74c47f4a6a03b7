/* SPDX-License-Identifier: MIT */
/*
 * rec.h: the top of record/ (stkrec): the command line (opts.c) and the run (run.c), and every
 * room's header, for main.c, opts.c and run.c. The rooms never include it (each has its own
 * header: base/ probe/ proc/ unwind/ ksyms/ write/). Nothing outside record/ but tests/unit/rec_*
 * and tests/tools/cfidump.c includes it.
 */
#ifndef STK_REC_H
#define STK_REC_H

#include <stdint.h>

#include "base/base.h"
#include "ksyms/ksyms.h"
#include "probe/probe.h"
#include "proc/proc.h"
#include "python/python.h"
#include "unwind/unwind.h"
#include "write/write.h"

/* ---- options (opts.c) ------------------------------------------------------------------ */

/*
 * Parse argv into opts (which borrows argv's strings; free with rec_opts__free()). Returns 0 to
 * run, 1 when --help or --version was printed (exit 0), -EINVAL on a usage error (already
 * printed, exit 2).
 */
int rec_parse_opts(int argc, char **argv, struct rec_opts *opts);
void rec_opts__free(struct rec_opts *opts);

/* Parse "1,2,3" into a new array; -EINVAL on anything but positive decimal ids. */
int rec_parse_id_list(const char *s, uint32_t **ids, uint32_t *n);

/* Parse a decimal number in [min, max]; -EINVAL otherwise. */
int rec_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* ---- the run (run.c) ------------------------------------------------------------------------ */

/* Set by the SIGINT/SIGTERM handler in main.c. */
extern volatile int rec_stop;
/* Set by main.c's handlers: SIGHUP or SIGUSR2 with --rotate (a new file now), SIGUSR1 with
 * --flight (dump now). The main loop ends the interval and clears them. */
extern volatile int rec_rotate_now;
extern volatile int rec_dump_now;

int rec_run(const struct rec_opts *opts);

#endif /* STK_REC_H */
