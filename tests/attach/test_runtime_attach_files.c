// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A library a traced process names is never looked up by that name again:
 * runtime_attach opens it by its mapping (/proc/PID/map_files), reads its
 * symbols and attaches its uprobes through that one descriptor.
 *
 * - A plugin (a small .so built here, exporting GetPjrtApi) mapped by this
 *   process is probed through a descriptor held open, which is the mapped
 *   inode, and a call of it is recorded.
 * - The process leaves (its library's probes detached) and comes back (they
 *   are attached again for the new first user) after the plugin's file was
 *   moved to another name and another file took its old one: the probe
 *   lands on the mapped inode again, at offsets read from it, not on the
 *   file the first name holds now.
 * - A process whose environment names a FIFO or a device node as its
 *   plugin (TPU_LIBRARY_PATH) is examined without hanging, and neither
 *   becomes a library.
 *
 * Root only: it loads BPF programs and reads /proc/PID/map_files.
 */
#include <dlfcn.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test.h"
#include "lib/log.h"
#include "attach/runtime_attach.h"
#include "probe/probe_session.h"

static char dir[4096];
static const char *cc;

struct seen {
	int probe_id;
	int calls;
};

static int on_record(void *ctx, const void *data, size_t size)
{
	const struct ev_rt_call *r = data;
	struct seen *s = ctx;

	if (size >= RT_CALL_HEAD && r->h.type == EV_RT_CALL && r->h.pid == (uint32_t)getpid() &&
	    (int)r->probe_id == s->probe_id)
		s->calls++;
	return 0;
}

static const char *at(const char *name)
{
	static char buf[4][4300];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

/* Builds @name exporting GetPjrtApi, after @pad bytes of other code so
 * that its offset differs from one build to the next. */
static bool build_plugin(const char *name, int pad)
{
	char src[4300], cmd[9000];
	FILE *f;

	snprintf(src, sizeof(src), "%s.c", at(name));
	f = fopen(src, "w");
	if (!f)
		return false;
	fprintf(f, "static char table[64];\n"
		   "__attribute__((used)) void padding(void) { __asm__ volatile(\".skip %d, 0x90\"); }\n"
		   "void *GetPjrtApi(void) { __asm__ volatile(\"\" ::: \"memory\"); return table; }\n",
		pad);
	if (fclose(f))
		return false;
	snprintf(cmd, sizeof(cmd), "%s -O2 -fPIC -shared -o '%s' '%s' 2>/dev/null", cc, at(name),
		 src);
	return system(cmd) == 0;
}

static struct attached_probe *getpjrtapi_probe(struct runtime_attach *ra)
{
	for (size_t i = 0; i < runtime_attach__probe_count(ra); i++) {
		const struct attached_probe *p = runtime_attach__probe_at(ra, i);

		if (!strcmp(p->entry->name, "GetPjrtApi"))
			return (struct attached_probe *)p;
	}
	return NULL;
}

/* Calls the plugin's GetPjrtApi once: how many calls the probe recorded. */
static int calls_recorded(struct probe_session *ps, struct seen *s, void *(*fn)(void),
			  const struct attached_probe *p)
{
	s->probe_id = p ? p->probe_id : -2;
	s->calls = 0;
	fn();
	probe_session__drain(ps);
	return s->calls;
}

/* The mapped file moves to another name; another file takes its name. */
static bool take_name(const char *name)
{
	return !rename(at(name), at("moved.so")) && build_plugin("other.so", 8192) &&
	       !rename(at("other.so"), at(name));
}

static void test_swapped_library(void)
{
	struct probe_session_opts opts = { .sz = sizeof(opts) };
	struct probe_session *ps = NULL;
	struct runtime_attach *ra = NULL;
	struct attached_probe *p;
	struct seen s = { .probe_id = -2 };
	struct stat mapped, held;
	struct features f;
	void *(*fn)(void) = NULL;
	void *h = NULL;
	int held_fd = -1;

	if (!ASSERT_TRUE(build_plugin("libswap_plugin.so", 64), "build the plugin"))
		return;
	ASSERT_OK(stat(at("libswap_plugin.so"), &mapped), "stat it");
	h = dlopen(at("libswap_plugin.so"), RTLD_NOW | RTLD_LOCAL);
	if (!ASSERT_OK_PTR(h, "dlopen the plugin"))
		return;
	fn = (void *(*)(void))dlsym(h, "GetPjrtApi");
	if (!ASSERT_OK_PTR(fn, "its GetPjrtApi"))
		goto out;

	features__probe(&f);
	opts.features = &f;
	opts.ring_bytes = 1 << 20;
	ps = probe_session__open(&opts, on_record, &s);
	if (!ASSERT_OK_PTR(ps, "probe session"))
		goto out;
	ASSERT_OK(probe_session__trace_pid(ps, getpid(), TRACED_TARGET), "trace self");
	ra = runtime_attach__new(ps, NULL);
	if (!ASSERT_OK_PTR(ra, "runtime_attach__new"))
		goto out;
	ASSERT_GE(runtime_attach__add_process(ra, getpid(), NULL), 1, "the plugin found");
	p = getpjrtapi_probe(ra);
	if (!ASSERT_OK_PTR(p, "GetPjrtApi probed") || !ASSERT_GE(p->probe_id, 0, "attached"))
		goto out;
	ASSERT_EQ(p->lib->ino, (uint64_t)mapped.st_ino, "the library is the mapped inode");
	/* The kernel was given the held descriptor, which is that inode. */
	if (ASSERT_EQ(sscanf(p->attach_path, "/proc/self/fd/%d", &held_fd), 1,
		      "attached through a held descriptor"))
		ASSERT_TRUE(!fstat(held_fd, &held) && held.st_ino == mapped.st_ino &&
			    held.st_dev == mapped.st_dev, "which is the mapped file");
	ASSERT_EQ(calls_recorded(ps, &s, fn, p), 1, "a call of the mapped code is recorded");

	/* It leaves; its file's name changes hands; it comes back. */
	runtime_attach__remove_process(ra, getpid());
	ASSERT_EQ(p->probe_id, -1, "detached when its last user left");
	ASSERT_EQ(calls_recorded(ps, &s, fn, p), 0, "nothing recorded meanwhile");
	if (!ASSERT_TRUE(take_name("libswap_plugin.so"), "another file takes its name"))
		goto out;
	ASSERT_GE(runtime_attach__add_process(ra, getpid(), NULL), 1, "back");
	ASSERT_GE(p->probe_id, 0, "attached again");
	ASSERT_EQ(calls_recorded(ps, &s, fn, p), 1, "on the original inode: its call recorded");
out:
	runtime_attach__free(ra);
	probe_session__free(ps);
	if (h)
		dlclose(h);
}

/* A child whose TPU_LIBRARY_PATH names @path; it waits to be killed. */
static pid_t child_naming(const char *path)
{
	char env[4400];
	pid_t pid;

	snprintf(env, sizeof(env), "TPU_LIBRARY_PATH=%s", path);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { "sleep", "60", NULL };
		char *envp[] = { env, NULL };

		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	return pid;
}

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "FAIL: examining the process hung\n");
	_exit(1);
}

static void test_hostile_environment(void)
{
	const char *names[] = { at("plugin.fifo"), "/dev/zero" };
	struct runtime_attach *ra = runtime_attach__new(NULL, NULL);

	if (!ASSERT_OK_PTR(ra, "runtime_attach__new (plan only)") ||
	    !ASSERT_OK(mkfifo(names[0], 0644), "mkfifo"))
		goto out;
	signal(SIGALRM, on_alarm);
	for (size_t i = 0; i < 2; i++) {
		pid_t child = child_naming(names[i]);
		char what[128];

		if (!ASSERT_GE(child, 1, "fork"))
			break;
		/* Until the child runs sleep with its environment. */
		for (int tries = 0; tries < 500; tries++) {
			char exe[64] = "", link[64];
			ssize_t n;

			snprintf(link, sizeof(link), "/proc/%d/exe", (int)child);
			n = readlink(link, exe, sizeof(exe) - 1);
			if (n > 0 && strstr(exe, "sleep"))
				break;
			usleep(10 * 1000);
		}
		alarm(10);
		runtime_attach__add_process(ra, child, NULL);
		alarm(0);
		snprintf(what, sizeof(what), "%s named as the plugin: no library",
			 i ? "a device node" : "a FIFO");
		ASSERT_EQ(runtime_attach__library_count(ra), 0, what);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
out:
	runtime_attach__free(ra);
}

static bool make_dir(void)
{
	snprintf(dir, sizeof(dir) - 64, "%s/attach-files.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(dir) != NULL;
}

int main(void)
{
	char cmd[4200];

	test_require_root("loads BPF programs and reads /proc/PID/map_files");
	log_route_libbpf();
	cc = getenv("CC") && getenv("CC")[0] ? getenv("CC") : "cc";
	if (!make_dir()) {
		printf("SKIP: cannot make a temporary directory\n");
		return TEST_SKIP;
	}
	if (!build_plugin("probe.so", 0)) {
		printf("SKIP: no working C compiler (%s)\n", cc);
		return TEST_SKIP;
	}
	test_swapped_library();
	test_hostile_environment();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "note: could not remove %s\n", dir);
	return test_exit();
}
