/* SPDX-License-Identifier: MIT */
/*
 * test_writer: file mode 0600 whatever the umask and whatever mode an old file had; a full disk
 * (a 64 KiB tmpfs) leaves a file readable to its last complete chunk and the writer usable once
 * space returns; a writer killed with SIGKILL mid-stream leaves a readable prefix. Background
 * mode writes the very bytes the caller's writes would, and on a full disk reports the error
 * at a later put or at finish, writing nothing after the failed chunk.
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

/* 300 chunks of every size up to 30,000 bytes, written by the caller or in the background. */
static int write_many(const char *path, bool background)
{
	static uint8_t payload[30000];
	struct cap_writer *w = cap_writer__open(path);
	int err = w ? 0 : -errno;

	if (!err && background)
		err = cap_writer__background(w, 64 * 1024);	/* small: put waits often */
	for (int i = 0; i < 300 && !err; i++) {
		fill_random(payload, sizeof(payload), (uint64_t)i);
		err = cap_writer__put_raw(w, CAP_CHUNK_END, 0, payload, (size_t)i * 100);
	}
	if (!err)
		err = cap_writer__finish(w);
	cap_writer__close(w);
	return err;
}

static void test_background_same_bytes(void)
{
	char a[512], b[512];
	size_t la = 0, lb = 0;
	uint8_t *fa, *fb;

	snprintf(a, sizeof(a), "%s/plain.stk", dir);
	snprintf(b, sizeof(b), "%s/background.stk", dir);
	T_EQ_INT("background: plain writes", 0, write_many(a, false));
	T_EQ_INT("background: background writes", 0, write_many(b, true));
	fa = slurp(a, &la);
	fb = slurp(b, &lb);
	T_CHECK("background: the same bytes as the caller's writes",
		fa && fb && la && la == lb && !memcmp(fa, fb, la), "%zu and %zu bytes", la, lb);
	free(fa);
	free(fb);
	T_EQ_INT("background: twice is refused", -EINVAL, cap_writer__background(NULL, 1));
}

static void test_background_enospc(void)
{
	enum { CHUNK = 10000 };
	static uint8_t payload[CHUNK];
	char mnt[256], path[512];
	struct cap_writer *w;
	int i, ret = 0, end, n;
	struct stat st;

	snprintf(mnt, sizeof(mnt), "%s/small2", dir);
	mkdir(mnt, 0700);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k")) {
		printf("skip background full disk: cannot mount a 64k tmpfs: %s (needs root)\n",
		       strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/full.stk", mnt);
	w = cap_writer__open(path);
	if (!T_CHECK("background full disk: open", w && !cap_writer__background(w, 1 << 20), "%s",
		     strerror(errno)))
		goto out;
	for (i = 0; i < 100 && !ret; i++) {
		fill_random(payload, sizeof(payload), (uint64_t)i + 7);
		ret = cap_writer__put_raw(w, CAP_CHUNK_END, 0, payload, sizeof(payload));
	}
	if (!ret)
		ret = cap_writer__finish(w);
	T_EQ_INT("background full disk: a later put or finish says -ENOSPC", -ENOSPC, ret);
	T_EQ_INT("background full disk: finish says it again", -ENOSPC, cap_writer__finish(w));
	n = count_chunks(path, &end);
	T_CHECK("background full disk: file reads cleanly to its last complete chunk",
		end == 0 && n >= 3 && !stat(path, &st) && (uint64_t)st.st_size == cap_writer__size(w),
		"ended with %d after %d chunks, file %lld bytes, writer %" PRIu64, end, n,
		(long long)st.st_size, cap_writer__size(w));
	cap_writer__close(w);
out:
	umount(mnt);
}

/*
 * A child writes chunks as fast as it can; SIGKILL it; the file must read cleanly to a point.
 * The child says when its first chunk is written, so a slow start (a loaded CI host, a
 * sanitizer build) cannot turn into a kill before the file exists.
 */
static void test_kill9(void)
{
	static uint8_t payload[3000];
	char path[512], started;
	int round, bad = 0, status, end, n, total = 0, ready[2];

	snprintf(path, sizeof(path), "%s/killed.stk", dir);
	for (round = 0; round < 5; round++) {
		pid_t pid;

		if (pipe(ready)) {
			T_FAIL("SIGKILL mid-write: pipe", "%s", strerror(errno));
			return;
		}
		pid = fork();
		if (pid == 0) {
			struct cap_writer *w = cap_writer__open(path);

			if (!w)
				_exit(1);
			for (uint64_t i = 0;; i++) {
				fill_random(payload, sizeof(payload), i);
				cap_writer__put_raw(w, CAP_CHUNK_END, 0, payload,
						    sizeof(payload) - i % 100);
				if (i == 0 && write(ready[1], "", 1) != 1)
					_exit(1);
			}
		}
		close(ready[1]);
		if (read(ready[0], &started, 1) != 1)
			bad++;
		close(ready[0]);
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
	test_background_same_bytes();
	test_background_enospc();
	rm_tree(dir);
	T_EXIT();
}
