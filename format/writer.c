/* SPDX-License-Identifier: MIT */
/*
 * writer.c: append-only capture writer (format.md 6). A chunk is built whole in memory, then
 * written with one pwrite loop at the end of the last complete chunk. Earlier bytes are never
 * rewritten, so a recorder killed at any moment leaves a file readable up to its last complete
 * chunk; a failed write is cut back off so even that torn tail does not stay.
 *
 * Background mode (cap_writer__background): the caller encodes and checks each record, as in
 * the plain mode, and queues the payload; one thread compresses, checksums and appends the
 * chunks in order, so a large record (an object's symbol table, a batch of events) never holds
 * up the recording thread. A failed write stops it: nothing queued after the failed chunk is
 * written, and the error is returned by the next put, and by finish, and from then on by every
 * put and finish (unlike a caller's own failed write, which a later one may follow).
 *
 * A full disk (ENOSPC, EDQUOT) is not a failure yet: the torn chunk is cut back, stays at the
 * head of the queue and is tried again every RETRY_MS, while later chunks queue behind it; room
 * made meanwhile (a log rotated, a file deleted) loses nothing. Only when the queue is full too
 * does a put fail with the disk's error, and finish after one last try.
 */
#include <errno.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <lz4hc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define RETRY_MS 200

/* A chunk waiting for the background thread. */
struct pending {
	struct pending *next;
	uint16_t type, flags;
	size_t len;
	uint8_t payload[];
};

struct background {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a chunk queued, a chunk written, or the end asked for */
	struct pending *head, *tail;
	size_t bytes, max_bytes;	/* queued payload; put() waits above max_bytes */
	bool stop;
	int full;		/* -ENOSPC or -EDQUOT while the head chunk waits for room */
	int err;		/* the first failure: the thread writes nothing after it */
};

struct cap_writer {
	int fd;
	uint32_t seq;		/* number of the next chunk */
	uint64_t size;		/* bytes of complete chunks (header included); __atomic */
	int broken;		/* a failed write could not be cut off: refuse to append after it */
	int dropped;		/* a background write failed: what was queued after it is lost */
	struct cap_buf raw;	/* encoded payload */
	struct cap_buf out;	/* chunk header + lz4 frame (the background thread's in that mode) */
	struct cap_stack_set *held[2];	/* kernel, user stacks the file holds (format.md 4.4) */
	struct background *bg;	/* NULL: chunks are written by the caller */
};

/* Write all of buf at off, retrying short writes and EINTR. Returns 0 or -errno. */
static int pwrite_all(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	ssize_t n;

	while (len) {
		n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Write bytes after the last complete chunk; on failure cut the file back to it. */
static int append(struct cap_writer *w, const uint8_t *buf, size_t len)
{
	int err;

	if (w->broken)
		return w->broken;
	err = pwrite_all(w->fd, buf, len, w->size);
	if (err) {
		if (ftruncate(w->fd, (off_t)w->size) < 0)
			w->broken = err;
		return err;
	}
	__atomic_store_n(&w->size, w->size + len, __ATOMIC_RELAXED);	/* cap_writer__size() */
	return 0;
}

/* format.md 2 */
static int write_file_header(struct cap_writer *w)
{
	uint8_t hdr[CAP_FILE_HDR_LEN];

	memcpy(hdr, CAP_FILE_MAGIC, CAP_FILE_MAGIC_LEN);
	cap_store_u16(hdr + 8, CAP_MAJOR);
	cap_store_u16(hdr + 10, CAP_MINOR);
	cap_store_u32(hdr + CAP_FILE_HDR_CRC_OFF, cap_crc32c(0, hdr, CAP_FILE_HDR_CRC_OFF));
	return append(w, hdr, sizeof(hdr));
}

struct cap_writer *cap_writer__open(const char *path)
{
	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	/* a capture holds kernel addresses and every process's argv: private */
	return cap_writer__open_fd(cap_create_output(path, true), path);
}

struct cap_writer *cap_writer__open_fd(int fd, const char *path)
{
	struct cap_writer *w;
	int err = -ENOMEM;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (w) {
		w->fd = fd;
		w->held[0] = cap_stack_set__new();
		w->held[1] = cap_stack_set__new();
		if (w->held[0] && w->held[1])
			err = write_file_header(w);
	}
	if (err) {
		/* a file without its header (a full disk) is no capture: leave none behind */
		if (path)
			unlink(path);
		if (w)
			cap_writer__close(w);
		else
			close(fd);
		errno = -err;
		return NULL;
	}
	return w;
}

/* format.md 3.1: header, then one lz4 frame with its content size, checksummed together. */
/*
 * A buffer grown past this for one large chunk (an object's symbol table can be tens of MiB)
 * is given back once the chunk is out: a recording of hours would otherwise hold its largest
 * chunk twice, encoded and compressed, to the end.
 */
#define BUF_KEEP (1u << 20)

static void release_if_large(struct cap_buf *b)
{
	if (b->cap > BUF_KEEP)
		cap_buf__free(b);
}

/*
 * lz4's fast default for most chunks, which are written while probes fire. An OBJECTS record is
 * written once per object and is most of a short capture (a libc symbol table alone is about
 * 100 KiB): lz4's lightest high-compression level makes it about a fifth smaller, at about
 * 15 ms a MiB on the writer's thread where lz4's default takes 3.
 */
static int compression_level(uint16_t type)
{
	return type == CAP_CHUNK_OBJECTS ? LZ4HC_CLEVEL_MIN : 0;
}

static int put_chunk(struct cap_writer *w, uint16_t type, uint16_t flags, const void *payload,
		     size_t len)
{
	LZ4F_preferences_t prefs = {
		.frameInfo.contentSize = len,
		.compressionLevel = compression_level(type),
	};
	struct cap_chunk_hdr h = { .type = type, .flags = flags, .seq = w->seq };
	size_t bound, stored;
	int err;

	if (len > CAP_MAX_CHUNK_RAW)
		return -EOVERFLOW;
	if (len && !payload)
		return -EINVAL;
	bound = LZ4F_compressFrameBound(len, &prefs);
	w->out.len = 0;
	w->out.err = 0;
	err = cap_buf__reserve(&w->out, CAP_CHUNK_HDR_LEN + bound);
	if (err)
		return err;
	stored = LZ4F_compressFrame(w->out.data + CAP_CHUNK_HDR_LEN, bound, payload, len, &prefs);
	if (LZ4F_isError(stored))
		return -EIO;
	h.raw_len = (uint32_t)len;
	h.stored_len = (uint32_t)stored;
	cap_chunk_hdr__pack(&h, w->out.data);
	h.crc = cap_chunk_crc(w->out.data, w->out.data + CAP_CHUNK_HDR_LEN, stored);
	cap_store_u32(w->out.data + CAP_CHUNK_HDR_CRC_OFF, h.crc);
	err = append(w, w->out.data, CAP_CHUNK_HDR_LEN + stored);
	release_if_large(&w->out);
	if (err)
		return err;
	w->seq++;
	return 0;
}

/* ---- background mode ---------------------------------------------------------------------- */

static bool disk_full(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}

/* Sleep RETRY_MS, or less if the end is asked for (bg->lock held). */
static void wait_for_room(struct background *bg)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += RETRY_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	while (!bg->stop && pthread_cond_timedwait(&bg->cond, &bg->lock, &until) != ETIMEDOUT)
		;
}

static void *background_main(void *arg)
{
	struct cap_writer *w = arg;
	struct background *bg = w->bg;
	struct pending *p;
	int err;

	pthread_mutex_lock(&bg->lock);
	for (;;) {
		while (!bg->head && !bg->stop)
			pthread_cond_wait(&bg->cond, &bg->lock);
		p = bg->head;
		if (!p)
			break;		/* stop, and nothing left */
		err = bg->err;
		pthread_mutex_unlock(&bg->lock);
		if (!err)
			err = put_chunk(w, p->type, p->flags, p->payload, p->len);
		pthread_mutex_lock(&bg->lock);
		if (disk_full(err) && !bg->stop) {
			bg->full = err;		/* p stays at the head */
			pthread_cond_broadcast(&bg->cond);	/* a put waiting for room fails */
			wait_for_room(bg);
			continue;
		}
		bg->full = 0;
		bg->head = p->next;
		if (!bg->head)
			bg->tail = NULL;
		bg->bytes -= p->len;
		if (err && !bg->err)
			bg->err = err;
		pthread_cond_broadcast(&bg->cond);	/* room in the queue */
		free(p);
	}
	pthread_mutex_unlock(&bg->lock);
	return NULL;
}

int cap_writer__background(struct cap_writer *w, size_t max_queued)
{
	struct background *bg;
	sigset_t all, old;
	int err;

	if (!w || w->bg || !max_queued)
		return -EINVAL;
	bg = calloc(1, sizeof(*bg));
	if (!bg)
		return -ENOMEM;
	bg->max_bytes = max_queued;
	pthread_mutex_init(&bg->lock, NULL);
	pthread_cond_init(&bg->cond, NULL);
	w->bg = bg;
	/* the caller's signals stay the caller's: its waits are what they must interrupt */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&bg->thread, NULL, background_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		w->bg = NULL;
		pthread_cond_destroy(&bg->cond);
		pthread_mutex_destroy(&bg->lock);
		free(bg);
		return -err;
	}
	return 0;
}

/* Queue a copy of payload (a full queue waits); the error of an earlier chunk if there was one. */
static int enqueue(struct cap_writer *w, uint16_t type, uint16_t flags, const void *payload,
		   size_t len)
{
	struct background *bg = w->bg;
	struct pending *p;
	int err;

	if (len > CAP_MAX_CHUNK_RAW)
		return -EOVERFLOW;
	if (len && !payload)
		return -EINVAL;
	p = malloc(sizeof(*p) + len);
	if (!p)
		return -ENOMEM;
	p->next = NULL;
	p->type = type;
	p->flags = flags;
	p->len = len;
	if (len)
		memcpy(p->payload, payload, len);
	pthread_mutex_lock(&bg->lock);
	while (!bg->err && !bg->full && bg->bytes && bg->bytes + len > bg->max_bytes) {
		pthread_cond_broadcast(&bg->cond);	/* the thread may not have been woken yet */
		pthread_cond_wait(&bg->cond, &bg->lock);
	}
	err = bg->err;
	if (!err && bg->full && bg->bytes && bg->bytes + len > bg->max_bytes)
		err = bg->full;		/* the disk is full and so is the queue */
	if (!err) {
		if (bg->tail)
			bg->tail->next = p;
		else
			bg->head = p;
		bg->tail = p;
		bg->bytes += len;
		/* else the caller's __flush wakes the thread, once for its batch of records */
		if (bg->bytes >= bg->max_bytes / 4)
			pthread_cond_broadcast(&bg->cond);
	}
	pthread_mutex_unlock(&bg->lock);
	if (err)
		free(p);
	return err;
}

void cap_writer__flush(struct cap_writer *w)
{
	if (!w || !w->bg)
		return;
	pthread_mutex_lock(&w->bg->lock);
	pthread_cond_broadcast(&w->bg->cond);
	pthread_mutex_unlock(&w->bg->lock);
}

/* Write what is queued, end the thread; the first write error, or 0. */
static int background_end(struct cap_writer *w)
{
	struct background *bg = w->bg;
	int err;

	if (!bg)
		return 0;
	pthread_mutex_lock(&bg->lock);
	bg->stop = true;
	pthread_cond_broadcast(&bg->cond);
	pthread_mutex_unlock(&bg->lock);
	pthread_join(bg->thread, NULL);
	err = bg->err;
	pthread_cond_destroy(&bg->cond);
	pthread_mutex_destroy(&bg->lock);
	free(bg);
	w->bg = NULL;
	w->dropped = err;	/* sticky: chunks the caller queued after the failure are gone */
	return err;
}

/* ---- the API -------------------------------------------------------------------------------- */

static int put(struct cap_writer *w, uint16_t type, uint16_t flags, const void *payload,
	       size_t len)
{
	if (w->dropped)
		return w->dropped;
	return w->bg ? enqueue(w, type, flags, payload, len) :
		       put_chunk(w, type, flags, payload, len);
}

int cap_writer__put(struct cap_writer *w, const struct cap_record *rec)
{
	uint32_t mark[2];
	uint16_t flags;
	int err;

	if (!w || !rec || !cap_chunk_type_known(rec->type))
		return -EINVAL;
	w->raw.len = 0;
	w->raw.err = 0;
	mark[0] = cap_stack_set__count(w->held[0]);
	mark[1] = cap_stack_set__count(w->held[1]);
	err = cap_record_encode(rec, w->held, &w->raw);
	if (err)
		return err;
	flags = cap_chunk_type_mandatory(rec->type) ? CAP_CHUNK_F_MANDATORY : 0;
	err = put(w, rec->type, flags, w->raw.data, w->raw.len);
	release_if_large(&w->raw);	/* the background mode queued a copy */
	if (err) {
		/* not in the file: a later chunk must write these stacks itself */
		cap_stack_set__truncate(w->held[0], mark[0]);
		cap_stack_set__truncate(w->held[1], mark[1]);
	}
	return err;
}

int cap_writer__put_raw(struct cap_writer *w, uint16_t type, uint16_t flags, const void *payload,
			size_t len)
{
	if (!w)
		return -EINVAL;
	return put(w, type, flags, payload, len);
}

int cap_writer__waiting(struct cap_writer *w)
{
	int full;

	if (!w || !w->bg)
		return 0;
	pthread_mutex_lock(&w->bg->lock);
	full = w->bg->full;
	pthread_mutex_unlock(&w->bg->lock);
	return full;
}

uint64_t cap_writer__size(const struct cap_writer *w)
{
	return w ? __atomic_load_n(&w->size, __ATOMIC_RELAXED) : 0;
}

int cap_writer__finish(struct cap_writer *w)
{
	int err;

	if (!w)
		return -EINVAL;
	err = background_end(w);
	if (err)
		return err;
	if (w->dropped)
		return w->dropped;
	if (w->broken)
		return w->broken;
	if (fsync(w->fd) < 0)
		return -errno;
	return 0;
}

void cap_writer__close(struct cap_writer *w)
{
	if (!w)
		return;
	background_end(w);	/* what was queued is written: each chunk is whole */
	if (w->fd >= 0)
		close(w->fd);
	cap_stack_set__free(w->held[0]);
	cap_stack_set__free(w->held[1]);
	cap_buf__free(&w->raw);
	cap_buf__free(&w->out);
	free(w);
}
