// SPDX-License-Identifier: MIT
/* main.c: stkreport: options -> struct rep_opts -> rep_run(). Exit 0, 1 on error, 2 on usage. */
#include <stdlib.h>

#include "report.h"

int main(int argc, char **argv)
{
	struct rep_opts opts;
	int err;

	err = rep_parse_opts(argc, argv, &opts);
	if (!err)
		err = rep_run(&opts) ? EXIT_FAILURE : EXIT_SUCCESS;
	else
		err = err > 0 ? EXIT_SUCCESS : 2;
	rep_opts__free(&opts);
	return err;
}
