// SPDX-License-Identifier: MIT
/*
 * files.c: opening files someone else may control. stkrec runs as root and reads files traced
 * processes write (perf maps, paths under /proc/PID/root); both tools write outputs into
 * directories other users can write (/tmp). A planted symlink, FIFO or device must not make
 * them block, spin, read a file its owner could not, or overwrite another file.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

#include "stk/capture.h"
#include "internal.h"

/* Read-only, never blocking on a FIFO, never becoming our terminal. */
#define INPUT_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

/* fd if it is a regular file (O_NONBLOCK does nothing to those), else closed and -EINVAL. */
static int keep_regular(int fd)
{
	struct stat st;
	int err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int cap_open_regular(const char *path, bool follow)
{
	return keep_regular(open(path, INPUT_FLAGS | (follow ? 0 : O_NOFOLLOW)));
}

/*
 * path resolved as if root were "/": an absolute symlink inside a container's tree ends inside
 * it, not on the host (RESOLVE_IN_ROOT, Linux 5.6; before that, -ENOSYS and nothing is read).
 */
int cap_open_in_root(const char *root, const char *path)
{
	struct open_how how = { .flags = INPUT_FLAGS | O_NOFOLLOW,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

	if (dir < 0)
		return -errno;
	while (*path == '/')
		path++;
	fd = keep_regular(syscall(SYS_openat2, dir, path, &how, sizeof(how)));
	close(dir);
	return fd;
}

/*
 * An output file (private: mode 0600, else 0666 less the umask): a new one is created with
 * O_EXCL (no symlink, FIFO or file of someone else can be there by then); an existing one is
 * reused only if it is a regular file, owned by owner, with no other name (a hard link to a
 * file we own elsewhere). Never truncated before those checks: a refused path is left as it was.
 */
static int create_output(const char *path, bool private, uid_t owner)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, private ? 0600 : 0666);
	if (fd >= 0 || errno != EEXIST)
		return fd >= 0 ? fd : -errno;
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		/* a symlink (ELOOP) or a FIFO without a reader (ENXIO) is there */
		return errno == ELOOP || errno == ENXIO ? -EEXIST : -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto fail;
	}
	err = -EEXIST;
	if (!S_ISREG(st.st_mode) || st.st_uid != owner || st.st_nlink != 1)
		goto fail;
	/* a private file made readable earlier (chmod) is private again */
	if (ftruncate(fd, 0) || (private && fchmod(fd, 0600)) || fcntl(fd, F_SETFL, 0)) {
		err = -errno;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

int cap_create_output(const char *path, bool private)
{
	return create_output(path, private, geteuid());
}

/*
 * The file system ids of this thread (not the process's: other threads keep root's) are the
 * user's for the call, so the kernel checks the user's rights on the directory, gives the new
 * file to the user, and from root drops the capabilities that would override them.
 */
int cap_create_output_as(const char *path, bool private, uid_t uid, gid_t gid)
{
	uid_t old_uid = geteuid();
	gid_t old_gid = getegid();
	int fd;

	setfsgid(gid);
	setfsuid(uid);
	/* setfsuid() answers with the old id whether or not it changed: ask again */
	if ((uid_t)setfsuid(-1) != uid || (gid_t)setfsgid(-1) != gid)
		fd = -EPERM;
	else
		fd = create_output(path, private, uid);
	setfsuid(old_uid);
	setfsgid(old_gid);
	return fd;
}

bool cap_is_capture_file(const char *path)
{
	char magic[CAP_FILE_MAGIC_LEN];
	int fd = cap_open_regular(path, true);
	bool yes;

	if (fd < 0)
		return false;
	yes = pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	      !memcmp(magic, CAP_FILE_MAGIC, sizeof(magic));
	close(fd);
	return yes;
}

FILE *cap_fopen_output(const char *path, bool private)
{
	int fd = cap_create_output(path, private), err;
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}

const char *cap_output_strerror(int err)
{
	if (err == -EEXIST)
		return "it exists and is a symlink, a FIFO or device, or another user's file "
		       "(left alone; remove it or choose another path)";
	return strerror(-err);
}

int cap_file_crc32(int fd, uint64_t size, uint32_t *crc)
{
	uint8_t buf[1 << 16];
	uint64_t off = 0;
	uLong c = crc32(0, NULL, 0);

	while (off < size) {
		size_t want = size - off < sizeof(buf) ? size - off : sizeof(buf);
		ssize_t n = pread(fd, buf, want, off);

		if (n <= 0)
			return n ? -errno : -EIO;
		c = crc32(c, buf, n);
		off += n;
	}
	*crc = c;
	return 0;
}
