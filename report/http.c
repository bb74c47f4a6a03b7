// SPDX-License-Identifier: MIT
/*
 * http.c: POST requests to one server with libcurl (http.h), for clickhouse.c. This file is
 * compiled twice: with libcurl for the dynamic stkreport, and for the static one (`make static`,
 * STK_HTTP_NONE) as a stub whose __open says that this stkreport has no HTTP client: libcurl
 * would bring a TLS library and glibc's NSS (getaddrinfo) into the one file, which a static
 * program can only use through the target's shared libc (see sym_debuginfod.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

#ifdef STK_HTTP_NONE

struct rep_http *rep_http__open(const char *url, char *why, size_t len)
{
	(void)url;
	snprintf(why, len, "this stkreport has no HTTP client (the static build leaves libcurl "
		 "out): use the dynamic stkreport");
	errno = ENOTSUP;
	return NULL;
}

void rep_http__close(struct rep_http *h)
{
	(void)h;
}

const char *rep_http__database(const struct rep_http *h)
{
	(void)h;
	return "default";
}

const char *rep_http__server(const struct rep_http *h)
{
	(void)h;
	return "?";
}

int rep_http__post(struct rep_http *h, const char *const *params, bool no_database,
		   const void *body, size_t len, char **reply, size_t *reply_len)
{
	(void)h, (void)params, (void)no_database, (void)body, (void)len, (void)reply;
	(void)reply_len;
	return -ENOTSUP;
}

const char *rep_http__error(const struct rep_http *h)
{
	(void)h;
	return strerror(ENOTSUP);
}

#else /* !STK_HTTP_NONE */

#include <curl/curl.h>

/* No connection in this long is a server that is down, not a slow one. */
#define CONNECT_TIMEOUT_S 10L
/*
 * A request that moves less than a byte a second for this long is given up: a server that
 * stopped answering, not one that works (an INSERT's answer comes once its rows are written,
 * a few seconds for the largest batch clickhouse.c sends).
 */
#define STALL_S 120L

struct rep_http {
	CURL *curl;
	CURLU *url;		/* the URL as given */
	CURLU *url_nodb;	/* the same without its database parameter */
	char *database;
	char server[300];
	char error[512];
	char curl_error[CURL_ERROR_SIZE];
	struct curl_slist *headers;
};

/* The answer being received, grown as it comes. */
struct reply {
	char *buf;
	size_t len, cap;
	bool failed;
};

static size_t on_data(char *data, size_t size, size_t n, void *ctx)
{
	struct reply *r = ctx;
	size_t len = size * n;

	if (r->len + len + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		char *v;

		while (cap < r->len + len + 1)
			cap *= 2;
		v = realloc(r->buf, cap);
		if (!v) {
			r->failed = true;
			return 0;	/* libcurl ends the transfer: CURLE_WRITE_ERROR */
		}
		r->buf = v;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, len);
	r->len += len;
	r->buf[r->len] = 0;
	return len;
}

/*
 * Split the URL's query string into the database parameter (decoded into h->database) and the
 * others (kept, as given, in url_nodb). 0 or -ENOMEM.
 */
static int split_database(struct rep_http *h)
{
	char *query = NULL, *rest = NULL, *save = NULL, *p;
	size_t n = 0;
	int err = 0;

	if (curl_url_get(h->url, CURLUPART_QUERY, &query, 0) != CURLUE_OK)
		query = NULL;	/* no query at all */
	rest = calloc(1, query ? strlen(query) + 1 : 1);
	if (!rest) {
		err = -ENOMEM;
		goto out;
	}
	for (p = query ? strtok_r(query, "&", &save) : NULL; p; p = strtok_r(NULL, "&", &save)) {
		if (!strncmp(p, "database=", 9)) {
			free(h->database);
			h->database = curl_easy_unescape(h->curl, p + 9, 0, NULL);
			if (!h->database) {
				err = -ENOMEM;
				goto out;
			}
			continue;
		}
		n += sprintf(rest + n, "%s%s", n ? "&" : "", p);
	}
	if (curl_url_set(h->url_nodb, CURLUPART_QUERY, n ? rest : NULL, 0) != CURLUE_OK)
		err = -ENOMEM;
out:
	curl_free(query);
	free(rest);
	return err;
}

static void name_server(struct rep_http *h)
{
	char *host = NULL, *port = NULL;

	curl_url_get(h->url, CURLUPART_HOST, &host, 0);
	curl_url_get(h->url, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
	snprintf(h->server, sizeof(h->server), "%s:%s", host ? host : "?", port ? port : "?");
	curl_free(host);
	curl_free(port);
}

struct rep_http *rep_http__open(const char *url, char *why, size_t len)
{
	struct rep_http *h;
	CURLUcode rc;

	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(why, len, "libcurl failed to start");
		errno = ENOMEM;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h) {
		h->curl = curl_easy_init();
		h->url = curl_url();
		h->url_nodb = curl_url();
		h->headers = curl_slist_append(NULL, "Content-Type: application/octet-stream");
		/* no "Expect: 100-continue" round trip before a large body */
		if (h->headers)
			h->headers = curl_slist_append(h->headers, "Expect:");
	}
	if (!h || !h->curl || !h->url || !h->url_nodb || !h->headers) {
		snprintf(why, len, "%s", strerror(ENOMEM));
		if (h)
			rep_http__close(h);
		else
			curl_global_cleanup();	/* __close does it when there is an h */
		errno = ENOMEM;
		return NULL;
	}
	rc = curl_url_set(h->url, CURLUPART_URL, url, 0);
	if (rc == CURLUE_OK)
		rc = curl_url_set(h->url_nodb, CURLUPART_URL, url, 0);
	if (rc != CURLUE_OK) {
		snprintf(why, len, "not a URL: %s", curl_url_strerror(rc));
		rep_http__close(h);
		errno = EINVAL;
		return NULL;
	}
	if (split_database(h)) {
		snprintf(why, len, "%s", strerror(ENOMEM));
		rep_http__close(h);
		errno = ENOMEM;
		return NULL;
	}
	name_server(h);
	return h;
}

void rep_http__close(struct rep_http *h)
{
	if (!h)
		return;
	curl_easy_cleanup(h->curl);
	curl_url_cleanup(h->url);
	curl_url_cleanup(h->url_nodb);
	curl_slist_free_all(h->headers);
	curl_free(h->database);
	free(h);
	curl_global_cleanup();
}

const char *rep_http__database(const struct rep_http *h)
{
	return h->database && *h->database ? h->database : "default";
}

const char *rep_http__server(const struct rep_http *h)
{
	return h->server;
}

const char *rep_http__error(const struct rep_http *h)
{
	return h->error;
}

/* The URL of one request: the base with params appended, URL-encoded. NULL when out of memory. */
static char *request_url(struct rep_http *h, const char *const *params, bool no_database)
{
	CURLU *u = curl_url_dup(no_database ? h->url_nodb : h->url);
	char *url = NULL;

	for (; u && params && *params; params++)
		if (curl_url_set(u, CURLUPART_QUERY, *params, CURLU_APPENDQUERY | CURLU_URLENCODE) !=
		    CURLUE_OK)
			goto out;
	if (u && curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK)
		url = NULL;
out:
	curl_url_cleanup(u);
	return url;
}

/* The first line of what the server said, as the error. */
static void server_error(struct rep_http *h, long status, const struct reply *r)
{
	size_t n = r->buf ? strcspn(r->buf, "\r\n") : 0;

	if (n)
		snprintf(h->error, sizeof(h->error), "%.*s", (int)n, r->buf);
	else
		snprintf(h->error, sizeof(h->error), "HTTP status %ld", status);
}

int rep_http__post(struct rep_http *h, const char *const *params, bool no_database,
		   const void *body, size_t len, char **reply, size_t *reply_len)
{
	struct reply r = { 0 };
	char *url = request_url(h, params, no_database);
	long status = 0;
	CURLcode rc;
	int err = 0;

	h->error[0] = 0;
	if (!url) {
		snprintf(h->error, sizeof(h->error), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	curl_easy_reset(h->curl);
	h->curl_error[0] = 0;
	curl_easy_setopt(h->curl, CURLOPT_URL, url);
	curl_easy_setopt(h->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body ? body : "");
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, h->curl_error);
	curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
	curl_easy_setopt(h->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h->curl, CURLOPT_LOW_SPEED_TIME, STALL_S);
	curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
	rc = curl_easy_perform(h->curl);
	curl_free(url);
	if (r.failed) {
		snprintf(h->error, sizeof(h->error), "%s", strerror(ENOMEM));
		err = -ENOMEM;
	} else if (rc != CURLE_OK) {
		snprintf(h->error, sizeof(h->error), "%s",
			 h->curl_error[0] ? h->curl_error : curl_easy_strerror(rc));
		err = -EIO;
	} else {
		curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
		if (status != 200) {
			server_error(h, status, &r);
			err = -EIO;
		}
	}
	if (!err && reply) {
		*reply = r.buf ? r.buf : strdup("");
		if (reply_len)
			*reply_len = r.len;
		return *reply ? 0 : -ENOMEM;
	}
	free(r.buf);
	return err;
}

#endif /* STK_HTTP_NONE */
