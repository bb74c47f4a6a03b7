/* SPDX-License-Identifier: MIT */
/*
 * http.h: POST requests to one HTTP server (a ClickHouse server's HTTP interface, clickhouse.c),
 * with libcurl. report/'s internal header: clickhouse.c and http.c only.
 */
#ifndef REP_HTTP_H
#define REP_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct rep_http;

/*
 * A client for url (http:// or https://, with its query string: user, password, database and
 * settings travel in it to every request). NULL on failure with errno (EINVAL: not a URL
 * libcurl takes; ENOTSUP: a stkreport built without libcurl; ENOMEM) and why[] filled.
 */
struct rep_http *rep_http__open(const char *url, char *why, size_t len);
void rep_http__close(struct rep_http *h);

/* The value of the URL's `database` parameter, or "default" without one. Lent until __close. */
const char *rep_http__database(const struct rep_http *h);
/* "host:port" of the URL, to name the server in messages (never the user or password). */
const char *rep_http__server(const struct rep_http *h);

/*
 * POST body[0..len) to the URL with the parameters of params (NULL, or "name=value" strings
 * ending with NULL; values are URL-encoded here) appended to its query string; no_database:
 * without the URL's `database` parameter (for CREATE DATABASE). On a 200 response, 0 and the
 * response body in *reply (NUL-terminated, *reply_len bytes without the NUL; the caller frees
 * it; reply may be NULL). Otherwise -EIO (the server could not be reached, or it answered with
 * another status) or -ENOMEM, and rep_http__error() says why in one line.
 */
int rep_http__post(struct rep_http *h, const char *const *params, bool no_database,
		   const void *body, size_t len, char **reply, size_t *reply_len);
/* Why the last request failed: libcurl's message, or the first line of the server's answer. */
const char *rep_http__error(const struct rep_http *h);

#endif /* REP_HTTP_H */
