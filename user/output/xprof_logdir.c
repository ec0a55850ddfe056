// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * XProf's profile directory layout (see xprof_logdir.h): naming the file,
 * creating the directory chain, and opening the capture file there. A
 * bucket logdir (store/store.h) is written in the spool first, the same
 * way, then uploaded under the same names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lib/atomic_file.h"
#include "output/xprof_logdir.h"
#include "store/store.h"

#define LOG_CONTEXT "output"
#include "lib/log.h"

bool xprof_valid_name(const char *s, size_t max, bool host)
{
	size_t n;

	if (!s || !*s || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (n = 0; s[n]; n++) {
		char c = s[n];

		if (n + 1 >= max)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
		      (host && c == ':')))
			return false;
	}
	return true;
}

static bool session_ok(const char *session)
{
	return session && session[0] && !strchr(session, '/') &&
	       strcmp(session, ".") && strcmp(session, "..");
}

int xprof_profile_file_name(char *buf, size_t len, const char *host)
{
	size_t n, i;

	if (!host || !host[0] || !strcmp(host, ".") || !strcmp(host, ".."))
		return -EINVAL;
	n = strlen(host);
	if (n + sizeof(".xplane.pb") > len)
		return -ENAMETOOLONG;
	for (i = 0; i < n; i++)
		buf[i] = host[i] == ':' || host[i] == '/' ? '_' : host[i];
	memcpy(buf + n, ".xplane.pb", sizeof(".xplane.pb"));
	return 0;
}

int xprof_profile_path(char *buf, size_t len, const char *logdir,
		       const char *session, const char *host)
{
	char file[512];
	int n, err;

	if (!logdir || !logdir[0] || !session_ok(session))
		return -EINVAL;
	err = xprof_profile_file_name(file, sizeof(file), host);
	if (err)
		return err;
	n = snprintf(buf, len, "%s/plugins/profile/%s/%s", logdir, session, file);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* mkdir -p, following symbolic links (the user's choice of logdir). */
static int mkdir_parents(char *path)
{
	for (char *p = path + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(path, 0750) && errno != EEXIST) {
			int err = -errno;

			log_err("cannot create directory %s: %s", path, io_error_reason(err));
			*p = c;
			return err;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

/* <logdir>/plugins/profile, created when missing and opened; -errno, logged. */
static int profile_dir_open(const char *logdir, char **profile_out)
{
	char *profile = NULL;
	int pfd, err;

	if (asprintf(&profile, "%s/plugins/profile", logdir) < 0)
		return -ENOMEM;
	err = mkdir_parents(profile);
	if (err)
		goto fail;
	pfd = open(profile, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		err = -errno;
		log_err("cannot open directory %s: %s", profile, io_error_reason(err));
		goto fail;
	}
	*profile_out = profile;
	return pfd;
fail:
	free(profile);
	return err;
}

/* The session directory in the profile directory @pfd, created when
 * missing, never through a symbolic link; an O_DIRECTORY fd, or -errno. */
static int session_dir_at(int pfd, const char *profile, const char *session)
{
	int fd, err;

	if (mkdirat(pfd, session, 0750) && errno != EEXIST) {
		err = -errno;
		log_err("cannot create directory %s/%s: %s", profile, session,
			io_error_reason(err));
		return err;
	}
	fd = openat(pfd, session, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		struct stat st;

		err = -errno;
		/* O_NOFOLLOW|O_DIRECTORY on a symlink says ENOTDIR: tell them apart. */
		if (err == -ENOTDIR && !fstatat(pfd, session, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISLNK(st.st_mode))
			err = -ELOOP;
		if (err == -ELOOP || err == -ENOTDIR)
			log_err("refusing %s/%s: %s", profile, session,
				err == -ELOOP ? "it is a symbolic link" : "not a directory");
		else
			log_err("cannot open directory %s/%s: %s", profile, session,
				io_error_reason(err));
		return err;
	}
	return fd;
}

int xprof_session_dir_open(const char *logdir, const char *session)
{
	char *profile = NULL;
	int pfd, err;

	if (!logdir || !logdir[0] || !session_ok(session)) {
		log_err("invalid profile directory: logdir \"%s\", session \"%s\"",
			logdir ? logdir : "", session ? session : "");
		return -EINVAL;
	}
	pfd = profile_dir_open(logdir, &profile);
	if (pfd < 0)
		return pfd;
	err = session_dir_at(pfd, profile, session);
	close(pfd);
	free(profile);
	return err;
}

/* A bucket's credentials and permission checked, then the spool. */
static int bucket_check(const char *url)
{
	struct store *s = store__open(url);
	int err;

	if (!s)
		return -errno;
	err = store__check(s, "plugins/profile");
	store__free(s);
	if (err)
		return err;
	return xprof_logdir_check(store_spool_dir());
}

int xprof_logdir_check(const char *logdir)
{
	struct atomic_file *af;
	char *profile = NULL;
	int pfd, err;

	if (!logdir || !logdir[0]) {
		log_err("no logdir to write captures to");
		return -EINVAL;
	}
	if (store_is_url(logdir))
		return bucket_check(logdir);
	pfd = profile_dir_open(logdir, &profile);
	if (pfd < 0)
		return pfd;
	/* A temporary file created, written, flushed and removed: what
	 * writing a capture there will do first. */
	af = atomic_file__openat(pfd, profile, "write-check");
	err = af ? 0 : -errno;
	if (af && (fputc('\n', atomic_file__stream(af)) == EOF ||
		   fflush(atomic_file__stream(af)))) {
		err = -errno;
		log_err("cannot write to %s: %s", profile, io_error_reason(err));
	}
	atomic_file__free(af);
	close(pfd);
	free(profile);
	return err;
}

int xprof_spool_profile_dir_open(void)
{
	char *profile = NULL;
	int fd = profile_dir_open(store_spool_dir(), &profile);

	free(profile);
	return fd;
}

int xprof_logdir_free_bytes(const char *logdir, uint64_t *bytes)
{
	char *profile = NULL;
	struct statvfs sv;
	int pfd, err = 0;

	/* A bucket's capture is written in the spool first. */
	pfd = profile_dir_open(store_is_url(logdir) ? store_spool_dir() : logdir, &profile);
	if (pfd < 0)
		return pfd;
	if (fstatvfs(pfd, &sv))
		err = -errno;
	else
		*bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	close(pfd);
	free(profile);
	return err;
}

/* ---------------------------------------------------------------- a capture file */

struct xprof_profile {
	struct atomic_file *af;
	int pfd;			/* <logdir>/plugins/profile */
	char *profile;			/* its path, for messages and paths */
	char *asked;			/* the session asked for */
	char session[XPROF_MAX_SESSION];/* the one it goes to */
	char file[512];			/* <host>.xplane.pb */
	char path[4096];		/* profile/session/file */
	unsigned int suffix;		/* 1: the session asked; n: "<asked>-n" */
	/* A bucket's: the file above is in the spool, uploaded at the commit
	 * under <url>/<key_prefix>/<session>/<file>. */
	char *url;			/* the bucket's; NULL: a local logdir */
	const char *key_prefix;		/* "plugins/profile" or "" */
	char url_path[4096];		/* where it went, once uploaded */
	char url_session[XPROF_MAX_SESSION];
	bool uploaded;
};

/* Names the session for @suffix; -ENAMETOOLONG when it does not fit. */
static int name_session(struct xprof_profile *p, unsigned int suffix)
{
	int n = suffix == 1 ? snprintf(p->session, sizeof(p->session), "%s", p->asked) :
		snprintf(p->session, sizeof(p->session), "%s-%u", p->asked, suffix);

	if (n < 0 || (size_t)n >= sizeof(p->session))
		return -ENAMETOOLONG;
	n = snprintf(p->path, sizeof(p->path), "%s/%s/%s", p->profile, p->session, p->file);
	return n < 0 || (size_t)n >= sizeof(p->path) ? -ENAMETOOLONG : 0;
}

/*
 * The first session from @from on ("<asked>", "<asked>-2", ...) without
 * this host's capture; its directory created and opened. An fd, or -errno.
 */
static int free_session(struct xprof_profile *p, unsigned int from)
{
	for (unsigned int n = from; n <= XPROF_MAX_SESSION_SUFFIX; n++) {
		char rel[sizeof(p->session) + sizeof(p->file) + 1];
		struct stat st;
		int err = name_session(p, n);

		if (err)
			return err;
		snprintf(rel, sizeof(rel), "%s/%s", p->session, p->file);
		if (!fstatat(p->pfd, rel, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		p->suffix = n;
		return session_dir_at(p->pfd, p->profile, p->session);
	}
	log_err("cannot write %s: sessions %s to %s-%u all hold a capture of this host",
		p->file, p->asked, p->asked, XPROF_MAX_SESSION_SUFFIX);
	return -EEXIST;
}

/* The rest of an open, once p->pfd and p->profile are set. */
static int open_in_profile_dir(struct xprof_profile *p)
{
	char sdir[4096];
	int err, dirfd;

	dirfd = free_session(p, 1);
	if (dirfd < 0)
		return dirfd;
	snprintf(sdir, sizeof(sdir), "%s/%s", p->profile, p->session);
	p->af = atomic_file__openat(dirfd, sdir, p->file);
	err = p->af ? 0 : -errno;
	close(dirfd);
	return err;
}

/* A profile with its names checked and set; NULL and errno, logged. */
static struct xprof_profile *profile_new(const char *what, const char *session,
					 const char *host)
{
	struct xprof_profile *p;
	int err;

	if (!what || !what[0] || !session_ok(session)) {
		log_err("invalid profile directory: \"%s\", session \"%s\"",
			what ? what : "", session ? session : "");
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pfd = -1;
	err = xprof_profile_file_name(p->file, sizeof(p->file), host);
	if (err) {
		log_err("cannot name the capture file for host \"%s\": %s",
			host ? host : "", strerror(-err));
		goto fail;
	}
	p->asked = strdup(session);
	if (!p->asked) {
		err = -ENOMEM;
		goto fail;
	}
	return p;
fail:
	xprof_profile__free(p);
	errno = -err;
	return NULL;
}

/* A bucket's profile: its URL kept; the store is opened at the upload,
 * so that nothing the network does can lose the capture before it is in
 * the spool. */
static int open_bucket(struct xprof_profile *p, const char *url, const char *key_prefix)
{
	p->url = strdup(url);
	p->key_prefix = key_prefix;
	return p->url ? 0 : -ENOMEM;
}

struct xprof_profile *xprof_profile__open(const char *logdir, const char *session,
					  const char *host)
{
	struct xprof_profile *p = profile_new(logdir, session, host);
	int err;

	if (!p)
		return NULL;
	if (store_is_url(logdir)) {
		err = open_bucket(p, logdir, "plugins/profile");
		if (err) {
			xprof_profile__free(p);
			errno = -err;
			return NULL;
		}
		logdir = store_spool_dir();
	}
	p->pfd = profile_dir_open(logdir, &p->profile);
	err = p->pfd < 0 ? p->pfd : open_in_profile_dir(p);
	if (err) {
		xprof_profile__free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

struct xprof_profile *xprof_profile__openat(int root_fd, const char *root,
					    const char *session, const char *host)
{
	struct xprof_profile *p = profile_new(root, session, host);
	int err = 0;

	if (!p)
		return NULL;
	/* A bucket root's fd is the spool's profile directory (profiler_roots.c). */
	if (store_is_url(root)) {
		err = open_bucket(p, root, "");
		if (asprintf(&p->profile, "%s/plugins/profile", store_spool_dir()) < 0)
			p->profile = NULL;
	} else {
		p->profile = strdup(root);
	}
	p->pfd = fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
	if (!err && !p->profile)
		err = -ENOMEM;
	else if (!err && p->pfd < 0)
		err = -errno;
	if (!err)
		err = open_in_profile_dir(p);
	if (err) {
		xprof_profile__free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

FILE *xprof_profile__stream(struct xprof_profile *p)
{
	return atomic_file__stream(p->af);
}

/*
 * The spool's file uploaded into the first session from the one asked on
 * that holds no capture of this host in the bucket; the spool's copy
 * removed once it is there, kept and said when it cannot be.
 */
static int upload(struct xprof_profile *p)
{
	struct store *store = store__open(p->url);
	char key[2048];
	int err = store ? -EEXIST : -errno;

	for (unsigned int n = 1; store && n <= XPROF_MAX_SESSION_SUFFIX && err == -EEXIST; n++) {
		int k = n == 1 ? snprintf(p->url_session, sizeof(p->url_session), "%s", p->asked) :
			snprintf(p->url_session, sizeof(p->url_session), "%s-%u", p->asked, n);
		bool fits = k >= 0 && (size_t)k < sizeof(p->url_session);

		if (fits) {
			k = snprintf(key, sizeof(key), "%s%s%s/%s", p->key_prefix,
				     p->key_prefix[0] ? "/" : "", p->url_session, p->file);
			fits = k >= 0 && (size_t)k < sizeof(key);
		}
		if (!fits) {
			err = -ENAMETOOLONG;
			break;
		}
		err = store__put_file(store, key, p->path);
	}
	if (err) {
		log_err("the capture could not be uploaded to %s: it is kept at %s; upload it "
			"with your cloud's tool, or run acceltrace report on it there",
			p->url, p->path);
		store__free(store);
		return err;
	}
	snprintf(p->url_path, sizeof(p->url_path), "%.1500s/%s", store__url(store), key);
	store__free(store);
	p->uploaded = true;
	if (unlinkat(p->pfd, p->path + strlen(p->profile) + 1, 0))
		log_warn("uploaded to %s, but the spool's copy %s stays: %s", p->url_path,
			 p->path, strerror(errno));
	unlinkat(p->pfd, p->session, AT_REMOVEDIR);	/* when empty */
	return 0;
}

static int local_commit(struct xprof_profile *p, uint64_t bytes);

int xprof_profile__commit(struct xprof_profile *p, uint64_t bytes)
{
	int err = local_commit(p, bytes);

	return err || !p->url ? err : upload(p);
}

/* The file renamed into its session directory. */
static int local_commit(struct xprof_profile *p, uint64_t bytes)
{
	int err = atomic_file__finish(p->af, bytes);

	if (err)
		return err;
	/* Another writer may have taken this session since the open (two
	 * records in the same second): the next free one, then. */
	for (;;) {
		char sdir[4096];
		int dirfd;

		dirfd = openat(p->pfd, p->session, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			       O_CLOEXEC);
		if (dirfd < 0) {
			err = -errno;
			log_err("cannot write %s: %s", p->path, io_error_reason(err));
			return err;
		}
		snprintf(sdir, sizeof(sdir), "%s/%s", p->profile, p->session);
		err = atomic_file__publish(p->af, dirfd, sdir, p->file, false);
		close(dirfd);
		if (err != -EEXIST)
			return err;
		dirfd = free_session(p, p->suffix + 1);
		if (dirfd < 0)
			return dirfd;
		close(dirfd);
	}
}

const char *xprof_profile__path(const struct xprof_profile *p)
{
	return p->uploaded ? p->url_path : p->path;
}

const char *xprof_profile__session(const struct xprof_profile *p)
{
	return p->uploaded ? p->url_session : p->session;
}

void xprof_profile__free(struct xprof_profile *p)
{
	if (!p)
		return;
	atomic_file__free(p->af);
	if (p->pfd >= 0)
		close(p->pfd);
	free(p->url);
	free(p->profile);
	free(p->asked);
	free(p);
}
