// SPDX-License-Identifier: MIT
/*
 * rep_sym_debuginfod.c: symbols fetched from a real debuginfod server. The test starts
 * `debuginfod -F DIR` on 127.0.0.1 serving the separate debug file of a stripped copy of
 * tests/golden/elf/golden.elf; no local copy of that debug file exists (its .gnu_debuglink
 * names a file that is nowhere on disk), so only the server can name the local function
 * read_file. Also: nothing is asked without DEBUGINFOD_URLS, and a dead server costs no wait.
 * Skipped when debuginfod(8) or curl(1) is not installed.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../symbolize/sym_internal.h"
#include "stk/symbolize.h"
#include "../test.h"
#include "rep_sym.h"

static char tmp[] = "/tmp/rep_sym_dbgd.XXXXXX";

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reason and name of READ_FILE in the stripped copy, with a fresh symbolizer. */
static void lookup(const struct cap_mapping *m, struct sym_result *r, const char **name)
{
	struct cap_process proc = { .pid = 1, .nmaps = 1, .maps = (struct cap_mapping *)m };
	struct sym_user *u = sym_user__new(&(struct sym_user_opts){ .open_files = true });

	sym_user__lookup(u, &proc, READ_FILE, false, r);
	/* the name lives as long as the symbolizer: compare before freeing it */
	*name = r->name && !strcmp(r->name, "read_file") ? "read_file" : r->name ? "other" : NULL;
	sym_user__free(u);
}

int main(void)
{
	char bin[300], hex[2 * CAP_BUILD_ID_MAX + 1], env[400];
	struct sym_elf *e = sym_elf__open(GOLDEN);
	struct cap_mapping m = { .kind = CAP_MAP_FILE, .start = 0x401000, .end = 0x402000,
				 .pgoff = 0x1000 };
	struct sym_result r;
	const char *name;
	pid_t server = -1;
	int port = 20000 + getpid() % 20000, i;
	double t0;

	if (sh("command -v debuginfod >/dev/null && command -v curl >/dev/null")) {
		printf("skip test_rep_debuginfod: debuginfod or curl not installed\n");
		return 0;
	}
	if (!e || !mkdtemp(tmp)) {
		T_FAIL("test_rep_debuginfod_setup", "cannot open " GOLDEN " or make a directory");
		T_EXIT();
	}
	elfobj_hex(e->build_id, e->build_id_len, hex);
	m.build_id_len = e->build_id_len;
	memcpy(m.build_id, e->build_id, e->build_id_len);
	snprintf(bin, sizeof(bin), "%s/bin/golden.elf", tmp);
	m.path = bin;
	if (sh("mkdir -p %s/srv %s/bin && objcopy --only-keep-debug %s %s/srv/golden.debug && "
	       "strip -o %s %s && objcopy --add-gnu-debuglink=%s/srv/golden.debug %s",
	       tmp, tmp, GOLDEN, tmp, bin, GOLDEN, tmp, bin)) {
		T_FAIL("test_rep_debuginfod_setup", "objcopy/strip failed");
		goto out;
	}
	snprintf(env, sizeof(env), "%s/cache", tmp);
	setenv("DEBUGINFOD_CACHE_PATH", env, 1);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_PROGRESS");
	lookup(&m, &r, &name);
	T_EQ_INT("test_rep_debuginfod_unset_no_symbols", SYM_R_NO_SYMBOLS, r.reason);

	/* a dead server: refused at once, and asked only once per report */
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	t0 = now();
	lookup(&m, &r, &name);
	T_EQ_INT("test_rep_debuginfod_dead_no_symbols", SYM_R_NO_SYMBOLS, r.reason);
	T_CHECK("test_rep_debuginfod_dead_fast", now() - t0 < 3, "took %.1f s", now() - t0);

	fflush(stdout);	/* the child must not flush our buffered lines a second time */
	server = fork();
	if (server == 0) {
		char p[16];

		snprintf(p, sizeof(p), "%d", port);
		if (chdir(tmp) || !freopen("server.log", "w", stdout) ||
		    !freopen("server.log", "a", stderr))
			_exit(127);
		execlp("debuginfod", "debuginfod", "-p", p, "-d", "db.sqlite", "-F", "srv",
		       (char *)NULL);
		_exit(127);
	}
	/* wait until the server has scanned the directory (curl: the client would cache the
	 * miss) */
	for (i = 0; i < 100; i++) {
		if (!sh("curl -sf -o /dev/null http://127.0.0.1:%d/buildid/%s/debuginfo", port, hex))
			break;
		usleep(200 * 1000);
	}
	if (!T_CHECK("test_rep_debuginfod_server", i < 100, "server on port %d never served %s",
		     port, hex))
		goto out;
	snprintf(env, sizeof(env), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", env, 1);
	lookup(&m, &r, &name);
	T_EQ_STR("test_rep_debuginfod_named", "read_file", name);
	/* the download is the debug file of exactly this build */
	T_CHECK("test_rep_debuginfod_cached",
		!sh("cmp -s %s/srv/golden.debug %s/cache/%s/debuginfo", tmp, tmp, hex),
		"no cached copy of the served file");
out:
	if (server > 0) {
		kill(server, SIGTERM);
		waitpid(server, NULL, 0);
	}
	sh("rm -rf %s", tmp);
	sym_elf__close(e);
	T_EXIT();
}
