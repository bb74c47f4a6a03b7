/* SPDX-License-Identifier: MIT */
/*
 * test_writer: file mode 0600 whatever the umask and whatever mode an old file had; a full disk
 * (a 64 KiB tmpfs) leaves a file readable to its last complete chunk and the writer usable once
 * space returns; a writer killed with SIGKILL mid-stream leaves a readable prefix.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "helpers.h"

static char *dir;

/* Incompressible bytes, so chunk sizes on disk are predictable. */
static void fill_random(uint8_t *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (uint8_t)(seed >> 56);
	}
}

/* Read every chunk; returns chunks read, *end the final result (0 or -errno). */
static int count_chunks(const char *path, int *end)
{
	struct cap_reader *r = cap_reader__open(path);
	struct cap_chunk ch;
	int n = 0;

	if (!r) {
		*end = -errno;
		return -1;
	}
	while ((*end = cap_reader__next(r, &ch)) == 1)
		n++;
	cap_reader__close(r);
	return n;
}

static void test_mode(void)
{
	char path[512];
	struct cap_writer *w;
	struct stat st;
	mode_t old = umask(0);
	int fd;

	snprintf(path, sizeof(path), "%s/mode.stk", dir);
	w = cap_writer__open(path);
	T_CHECK("new file mode 0600 under umask 0", w && !stat(path, &st) &&
		(st.st_mode & 07777) == 0600, "mode %o", w ? st.st_mode & 07777 : 0);
	cap_writer__close(w);

	snprintf(path, sizeof(path), "%s/old.stk", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	if (write(fd, "old contents, longer than a header", 34) != 34)
		T_FAIL("write old file", "%s", strerror(errno));
	fchmod(fd, 0644);
	close(fd);
	w = cap_writer__open(path);
	T_CHECK("existing 0644 file becomes 0600", w && !stat(path, &st) &&
		(st.st_mode & 07777) == 0600, "mode %o", w ? st.st_mode & 07777 : 0);
	T_CHECK("existing file truncated", w && st.st_size == 16, "size %lld",
		(long long)st.st_size);
	cap_writer__close(w);
	umask(old);

	snprintf(path, sizeof(path), "%s/no/such/dir.stk", dir);
	errno = 0;
	w = cap_writer__open(path);
	T_CHECK("open in a missing directory: ENOENT", !w && errno == ENOENT, "errno %d", errno);
}

static void test_enospc(void)
{
	enum { CHUNK = 10000 };
	char mnt[256], path[512], filler[512];
	static uint8_t payload[CHUNK];
	struct cap_writer *w;
	uint64_t before;
	struct stat st;
	int i, ret = 0, good = 0, end, n, fd;

	snprintf(mnt, sizeof(mnt), "%s/small", dir);
	mkdir(mnt, 0700);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k")) {
		printf("skip full disk: cannot mount a 64k tmpfs: %s (needs root)\n",
		       strerror(errno));
		return;
	}
	/* A filler file to delete later, to give space back. */
	snprintf(filler, sizeof(filler), "%s/filler", mnt);
	fd = open(filler, O_CREAT | O_WRONLY, 0600);
	fill_random(payload, sizeof(payload), 1);
	if (fd < 0 || write(fd, payload, 8192) != 8192)
		T_FAIL("filler", "%s", strerror(errno));
	close(fd);

	snprintf(path, sizeof(path), "%s/full.stk", mnt);
	w = cap_writer__open(path);
	if (!T_CHECK("open on small tmpfs", w, "%s", strerror(errno)))
		goto out;
	for (i = 0; i < 100; i++) {
		fill_random(payload, sizeof(payload), (uint64_t)i + 2);
		before = cap_writer__size(w);
		ret = cap_writer__put_raw(w, CAP_CHUNK_END, 0, payload, sizeof(payload));
		if (ret)
			break;
		good++;
	}
	T_EQ_INT("disk full: put returns -ENOSPC", -ENOSPC, ret);
	T_CHECK("disk full: some chunks fitted first", good >= 3, "%d chunks", good);
	T_CHECK("disk full: file cut back to the last complete chunk",
		!stat(path, &st) && (uint64_t)st.st_size == before &&
		cap_writer__size(w) == before, "file %lld, writer %" PRIu64 ", expected %" PRIu64,
		(long long)st.st_size, cap_writer__size(w), before);
	n = count_chunks(path, &end);
	T_CHECK("disk full: file reads cleanly to its end", end == 0, "ended with %d", end);
	T_EQ_INT("disk full: every chunk written before is readable", good, n);

	/* Space comes back: the writer goes on where it stopped, numbering continues. */
	unlink(filler);
	ret = cap_writer__put_raw(w, CAP_CHUNK_END, 0, "\1\0\0\0\2\0\0\0\0\0\0\0\3\0\0\0\0\0\0",
				  20);
	T_EQ_INT("space back: put succeeds", 0, ret);
	n = count_chunks(path, &end);
	T_CHECK("space back: file reads to the new chunk", end == 0 && n == good + 1,
		"end %d, %d chunks", end, n);
	T_EQ_INT("finish", 0, cap_writer__finish(w));
	cap_writer__close(w);
out:
	umount(mnt);
}

/* A child writes chunks as fast as it can; SIGKILL it; the file must read cleanly to a point. */
static void test_kill9(void)
{
	static uint8_t payload[3000];
	char path[512];
	int round, bad = 0, status, end, n, total = 0;

	snprintf(path, sizeof(path), "%s/killed.stk", dir);
	for (round = 0; round < 5; round++) {
		pid_t pid = fork();

		if (pid == 0) {
			struct cap_writer *w = cap_writer__open(path);

			if (!w)
				_exit(1);
			for (uint64_t i = 0;; i++) {
				fill_random(payload, sizeof(payload), i);
				cap_writer__put_raw(w, CAP_CHUNK_END, 0, payload,
						    sizeof(payload) - i % 100);
			}
		}
		usleep(20000 + round * 7000);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		n = count_chunks(path, &end);
		if (n < 0 || (end != 0 && end != -ENODATA))
			bad++;
		total += n;
	}
	T_CHECK("SIGKILL mid-write: file readable up to the cut", bad == 0 && total > 0,
		"%d of 5 rounds unreadable, %d chunks", bad, total);
}

int main(void)
{
	dir = tmp_dir();
	if (!dir) {
		T_FAIL("tmpdir", "%s", strerror(errno));
		T_EXIT();
	}
	test_mode();
	test_enospc();
	test_kill9();
	rm_tree(dir);
	T_EXIT();
}
