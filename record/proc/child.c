// SPDX-License-Identifier: MIT
/*
 * child.c: `stkrec -- COMMAND`. The child waits on a pipe until every probe is attached, then
 * execs. It runs under ptrace with PTRACE_O_TRACEEXIT for one reason: the exit stop comes
 * before the kernel releases the process's memory, so stkrec can read /proc/PID/maps of a
 * command that ran for a millisecond. Nothing else is traced (no threads, no children).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "proc.h"

struct rec_child {
	pid_t pid;
	int go_fd;		/* write end: one byte starts the command */
	bool exec_seen;
	bool exited;
	int status;
};

static void child_main(char **argv, int go_fd)
{
	char c;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(127);
	/* EOF without a byte: stkrec failed to set up; never run the command untraced. */
	if (read(go_fd, &c, 1) != 1)
		_exit(127);
	close(go_fd);
	execvp(argv[0], argv);
	fprintf(stderr, "stkrec: cannot run '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* execvp's search, done before anything is attached so a typo fails with a clear message. */
static bool command_exists(const char *cmd)
{
	const char *env = getenv("PATH");
	char path[PATH_MAX];

	if (strchr(cmd, '/'))
		return !access(cmd, X_OK);
	if (!env)
		env = "/usr/local/bin:/usr/bin:/bin";
	while (*env) {
		size_t n = strcspn(env, ":");

		if (n && n + strlen(cmd) + 2 <= sizeof(path)) {
			snprintf(path, sizeof(path), "%.*s/%s", (int)n, env, cmd);
			if (!access(path, X_OK))
				return true;
		}
		env += n + (env[n] == ':');
	}
	return false;
}

static void on_child_stop(int sig)
{
	(void)sig;
}

/*
 * The command stops at every signal it gets (ptrace), its own children's SIGCHLD included, and
 * waits until stkrec lets it go on: a stop must wake stkrec's main loop at once, not at its next
 * look 20 to 100 ms later (a loop of vfork and exit ran 120 times slower). The kernel tells the
 * tracer with a SIGCHLD to the thread that forked the command, the main loop's: a handler that
 * does nothing makes its wait return with EINTR. SA_RESTART: other calls go on as before.
 */
static void wake_on_stops(void)
{
	struct sigaction sa = { .sa_handler = on_child_stop, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
}

struct rec_child *rec_child__start(char **argv)
{
	struct rec_child *c;
	int fds[2];

	if (!command_exists(argv[0])) {
		errno = ENOENT;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (pipe2(fds, O_CLOEXEC)) {
		free(c);
		return NULL;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		free(c);
		return NULL;
	}
	if (c->pid == 0) {
		close(fds[1]);
		child_main(argv, fds[0]);
	}
	close(fds[0]);
	c->go_fd = fds[1];
	wake_on_stops();
	return c;
}

int rec_child__pid(const struct rec_child *c)
{
	return c ? c->pid : -1;
}

int rec_child__go(struct rec_child *c)
{
	char one = 1;
	int err = write(c->go_fd, &one, 1) == 1 ? 0 : -errno;

	close(c->go_fd);
	c->go_fd = -1;
	return err;
}

static void handle_stop(struct rec_child *c, int status, struct rec_procs *procs)
{
	int sig = WSTOPSIG(status), event = status >> 16, deliver = 0;

	if (event == PTRACE_EVENT_EXIT) {
		/* The last moment its mappings exist, with every library it loaded. */
		rec_procs__note(procs, c->pid, REC_READ_AGAIN);
	} else if (event == PTRACE_EVENT_EXEC) {
		/*
		 * A later exec of the command (`sh -c "exec prog"`). Without TRACEEXEC it would
		 * raise a plain SIGTRAP, which, passed on, kills the program.
		 */
	} else if (sig == SIGTRAP && !c->exec_seen) {
		/*
		 * The exec stop PTRACE_TRACEME asks for. Read the program before it runs: its first
		 * events then find it known, and are not all sent to user space at once.
		 */
		c->exec_seen = true;
		rec_procs__note(procs, c->pid, REC_READ_AGAIN);
		ptrace(PTRACE_SETOPTIONS, c->pid, NULL,
		       (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC |
				      PTRACE_O_EXITKILL));
	} else {
		deliver = sig;	/* an ordinary signal: pass it on */
	}
	ptrace(PTRACE_CONT, c->pid, NULL, (void *)(long)deliver);
}

bool rec_child__poll(struct rec_child *c, struct rec_procs *procs)
{
	int status;

	while (c && !c->exited) {
		pid_t r = waitpid(c->pid, &status, WNOHANG | __WALL);

		if (r <= 0)
			break;
		if (WIFSTOPPED(status)) {
			handle_stop(c, status, procs);
			continue;
		}
		c->exited = true;
		c->status = status;
	}
	return c && c->exited;
}

/* Stop the command if it still runs (recording ended first) and reap it. */
void rec_child__close(struct rec_child *c)
{
	int status;

	if (!c)
		return;
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (!c->exited) {
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, &status, __WALL) > 0 && WIFSTOPPED(status))
			ptrace(PTRACE_CONT, c->pid, NULL, NULL);
	}
	free(c);
}
