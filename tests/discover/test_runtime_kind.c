// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Runtime libraries recognised by their ABI, whatever their file is called:
 * small .so files built with cc at test time export GetPjrtApi under an
 * arbitrary name, the CUDA driver API, the CUDA runtime API, the TPU C API,
 * or nothing relevant (a libcuda.so.1 that exports nothing of the driver's
 * is not the driver); stripped, built with only a SysV hash table, with the
 * symbol hidden, undefined or a data object. The GNU hash lookup is checked
 * against a walk of .dynsym over thousands of exports. The cache parses a
 * file once per (st_dev, st_ino): a second path, a hard link and the
 * process's own mapping of it cost no parse; a copy does. runtime_attach's
 * --library and a mapped plugin are recognised by the same rules.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "test.h"
#include "discover/elf_image.h"
#include "discover/probe_packs.h"
#include "discover/proc_maps.h"
#include "attach/runtime_attach.h"
#include "discover/runtime_kind.h"

static char dir[4096];
static const char *cc;

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

/* Builds dir/@name from @src with @flags; false when cc fails. */
static bool build_so(const char *name, const char *src, const char *flags)
{
	char c[4300], so[4300], cmd[9000];

	snprintf(c, sizeof(c), "%s/%s.c", dir, name);
	snprintf(so, sizeof(so), "%s/%s", dir, name);
	if (!write_file(c, src))
		return false;
	snprintf(cmd, sizeof(cmd), "%s -O2 -fPIC -shared %s -o '%s' '%s' 2>/dev/null",
		 cc, flags ? flags : "", so, c);
	return system(cmd) == 0;
}

static const char *at(const char *name)
{
	static char buf[4][4300];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static bool make_dir(void)
{
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 64);

	if (n > 0) {
		dir[n] = '\0';
		*strrchr(dir, '/') = '\0';
		strcat(dir, "/kind-test.XXXXXX");
		if (mkdtemp(dir))
			return true;
	}
	snprintf(dir, sizeof(dir) - 64, "%s/kind-test.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(dir) != NULL;
}

static void remove_dir(void)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "note: could not remove %s\n", dir);
}

static const char *pack_name(const struct runtime_kind *k)
{
	return k->pack ? k->pack->name : "(none)";
}

/* Recognised as @want (NULL: not a runtime), with @why when not NULL. */
static void expect(const char *file, const char *want, const char *why)
{
	struct runtime_kind k;
	char name[256];

	snprintf(name, sizeof(name), "%s is %s", file, want ? want : "no runtime");
	if (!ASSERT_OK(runtime_kind__of_path(at(file), &k), name))
		return;
	ASSERT_STREQ(pack_name(&k), want ? want : "(none)", name);
	if (why)
		ASSERT_STREQ(k.why, why, name);
	ASSERT_EQ(k.how, want ? RT_KIND_BY_EXPORTS : RT_KIND_NOT_RUNTIME, name);
}

static bool build_all(void)
{
	static const char pjrt[] =
		"static int table[10];\n"
		"const void *GetPjrtApi(void) { return table; }\n"
		"int vendor_helper(int x) { return x + 1; }\n";
	static const char cuda[] =
		"int cuInit(unsigned f) { return (int)f; }\n"
		"int cuLaunchKernel(void *f) { return f != 0; }\n"
		"int cuMemcpyHtoDAsync_v2(void *d) { return d != 0; }\n";

	return build_so("vendor_runtime_v3.so", pjrt, NULL) &&
	       build_so("stripped_plugin.so", pjrt, "-s") &&
	       build_so("sysv_plugin.so", pjrt, "-Wl,--hash-style=sysv") &&
	       build_so("libgpu_shim.so", cuda, NULL) &&
	       build_so("launch_only.so", "int cuLaunchKernel(void *f) { return f != 0; }\n", NULL) &&
	       build_so("rt13.so", "int cudaLaunchKernel(const void *f) { return f != 0; }\n"
				   "int cudaGetDevice(int *d) { *d = 0; return 0; }\n", NULL) &&
	       build_so("tf_tpu_runtime.so",
			"void TpuExecutor_EnqueueInfeed(void *e, int q, const void *d, long n, void *s) {}\n",
			NULL) &&
	       build_so("tpu_both.so",
			"static int table[10];\n"
			"const void *GetPjrtApi(void) { return table; }\n"
			"void TpuExecutor_DequeueOutfeed(void *e, int q, void *d, long n, void *s) {}\n",
			NULL) &&
	       build_so("libnothing.so", "int foo(int x) { return x; }\n", NULL) &&
	       build_so("libcuda.so.1", "int cuda_is_not_here(int x) { return x; }\n", NULL) &&
	       build_so("hidden_plugin.so",
			"__attribute__((visibility(\"hidden\"))) const void *GetPjrtApi(void) { return 0; }\n"
			"const void *get(void) { return GetPjrtApi(); }\n", NULL) &&
	       build_so("calls_plugin.so",
			"extern const void *GetPjrtApi(void);\n"
			"const void *get(void) { return GetPjrtApi(); }\n", NULL) &&
	       build_so("data_plugin.so", "int GetPjrtApi[4] = { 1, 2, 3, 4 };\n", NULL) &&
	       build_so("weak_driver.so",
			"__attribute__((weak)) int cuInit(unsigned f) { return 0; }\n"
			"__attribute__((weak)) int cuLaunchKernel(void *f) { return 0; }\n", NULL);
}

static void test_recognition(void)
{
	expect("vendor_runtime_v3.so", "PJRT plugin", "exports GetPjrtApi");
	expect("stripped_plugin.so", "PJRT plugin", "exports GetPjrtApi");
	expect("sysv_plugin.so", "PJRT plugin", "exports GetPjrtApi");
	expect("libgpu_shim.so", "CUDA driver", "exports cuLaunchKernel and cuInit");
	expect("weak_driver.so", "CUDA driver", NULL);
	expect("launch_only.so", NULL, NULL);
	expect("rt13.so", "CUDA runtime", "exports cudaLaunchKernel");
	expect("tf_tpu_runtime.so", "TPU C API", "exports TpuExecutor_EnqueueInfeed");
	expect("tpu_both.so", "PJRT plugin", NULL);
	expect("libnothing.so", NULL, NULL);
	expect("libcuda.so.1", NULL, NULL);
	expect("hidden_plugin.so", NULL, NULL);
	expect("calls_plugin.so", NULL, NULL);
	expect("data_plugin.so", NULL, NULL);

	/* The stripped file has no .symtab; .dynsym is what counts. */
	{
		struct elf_image *img = elf_image__open(at("stripped_plugin.so"));
		struct elf_symbol sym;

		if (ASSERT_OK_PTR(img, "open stripped")) {
			ASSERT_OK(elf_image__find_export(img, "GetPjrtApi", &sym), "export");
			ASSERT_TRUE(sym.from_dynsym && sym.type == 2, "a function from .dynsym");
			ASSERT_EQ(elf_image__find_export(img, "table", &sym), -ENOENT,
				  "a static is no export");
			elf_image__free(img);
		}
	}
	/* Not ELF: remembered, never a runtime. */
	{
		struct runtime_kind k;

		write_file(at("notes.so"), "not an ELF file\n");
		ASSERT_OK(runtime_kind__of_path(at("notes.so"), &k), "text file");
		ASSERT_TRUE(!k.pack && k.how == RT_KIND_NOT_ELF, "text file: not ELF");
		ASSERT_EQ(runtime_kind__of_path(at("missing.so"), &k), -ENOENT, "missing file");
	}
}

/* The GNU hash lookup against a walk of .dynsym, over 3000 exports. */
static void test_hash_lookup(void)
{
	size_t cap = 3000 * 64 + 256, used = 0;
	char *src = malloc(cap);
	struct elf_image *gnu = NULL, *sysv = NULL;
	int mismatches = 0, found = 0;

	if (!ASSERT_OK_PTR(src, "alloc"))
		return;
	for (int i = 0; i < 3000; i++)
		used += snprintf(src + used, cap - used, "int fn_%d(int x) { return x + %d; }\n", i, i);
	snprintf(src + used, cap - used, "int cuInit(unsigned f) { return 0; }\n"
		 "int cuLaunchKernel(void *f) { return 0; }\n");
	if (!ASSERT_TRUE(build_so("many_gnu.so", src, NULL) &&
			 build_so("many_sysv.so", src, "-Wl,--hash-style=sysv"), "build many"))
		goto out;
	gnu = elf_image__open(at("many_gnu.so"));
	sysv = elf_image__open(at("many_sysv.so"));
	if (!ASSERT_OK_PTR(gnu, "open gnu") || !ASSERT_OK_PTR(sysv, "open sysv"))
		goto out;
	for (int i = 0; i < 3300; i++) {
		struct elf_symbol a, b, c;
		char name[32];
		int ea, eb, ec;

		snprintf(name, sizeof(name), "fn_%d", i);
		ea = elf_image__find_export(gnu, name, &a);
		eb = elf_image__find_symbol(gnu, name, &b);
		ec = elf_image__find_export(sysv, name, &c);
		found += !ea;
		if (ea != (i < 3000 ? 0 : -ENOENT) || ec != ea ||
		    (!ea && (eb || a.value != b.value)))
			mismatches++;
	}
	ASSERT_EQ(found, 3000, "every export found through .gnu.hash");
	ASSERT_EQ(mismatches, 0, "hash lookup = symbol walk, absent names absent");
	{
		struct runtime_kind k;

		ASSERT_OK(runtime_kind__of_path(at("many_gnu.so"), &k), "many");
		ASSERT_STREQ(pack_name(&k), "CUDA driver", "CUDA driver among 3000 exports");
	}
out:
	elf_image__free(gnu);
	elf_image__free(sysv);
	free(src);
}

static void test_cache(void)
{
	struct runtime_kind k;
	unsigned long before;
	char libc[4096] = "";
	struct proc_maps *maps;

	runtime_kind__forget();
	ASSERT_EQ(runtime_kind__parse_count(), 0, "forgotten");
	{
		struct stat st;

		if (ASSERT_OK(stat(at("vendor_runtime_v3.so"), &st), "stat")) {
			ASSERT_EQ(runtime_kind__known(st.st_dev, st.st_ino, &k), -ENOENT,
				  "not known before a look");
			ASSERT_OK(runtime_kind__of_path(at("vendor_runtime_v3.so"), &k), "look");
			ASSERT_OK(runtime_kind__known(st.st_dev, st.st_ino, &k),
				  "known after it, by identity alone");
			ASSERT_STREQ(pack_name(&k), "PJRT plugin", "known pack");
			runtime_kind__forget();
		}
	}
	ASSERT_OK(runtime_kind__of_path(at("vendor_runtime_v3.so"), &k), "first");
	ASSERT_EQ(runtime_kind__parse_count(), 1, "parsed once");
	for (int i = 0; i < 100; i++)
		runtime_kind__of_path(at("vendor_runtime_v3.so"), &k);
	ASSERT_EQ(runtime_kind__parse_count(), 1, "100 more looks, no parse");
	ASSERT_STREQ(pack_name(&k), "PJRT plugin", "remembered pack");
	ASSERT_STREQ(k.why, "exports GetPjrtApi", "remembered why");

	/* A hard link is the same file; a copy is another. */
	if (ASSERT_OK(link(at("vendor_runtime_v3.so"), at("hard_link.so")), "link")) {
		ASSERT_OK(runtime_kind__of_path(at("hard_link.so"), &k), "hard link");
		ASSERT_EQ(runtime_kind__parse_count(), 1, "hard link: no parse");
	}
	{
		char cmd[9000];

		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", at("vendor_runtime_v3.so"),
			 at("copy.so"));
		if (ASSERT_OK(system(cmd), "cp")) {
			ASSERT_OK(runtime_kind__of_path(at("copy.so"), &k), "copy");
			ASSERT_EQ(runtime_kind__parse_count(), 2, "copy: parsed");
			ASSERT_STREQ(pack_name(&k), "PJRT plugin", "copy recognised");
		}
	}
	/* "Not a runtime" is remembered too. */
	before = runtime_kind__parse_count();
	for (int i = 0; i < 10; i++)
		runtime_kind__of_path(at("libnothing.so"), &k);
	ASSERT_EQ(runtime_kind__parse_count(), before + 1, "not a runtime: parsed once");

	/* This process's mappings: libc is skipped by name, unparsed; the
	 * plugin dlopen()ed here is the file already parsed (maps give the
	 * same device and inode that stat does). */
	{
		void *h = dlopen(at("vendor_runtime_v3.so"), RTLD_NOW | RTLD_LOCAL);
		bool mapped = false;
		struct stat st;

		ASSERT_OK_PTR(h, "dlopen plugin");
		before = runtime_kind__parse_count();
		maps = proc_maps__read(0);
		for (size_t i = 0; maps && i < proc_maps__object_count(maps); i++) {
			const struct proc_object *o = proc_maps__object(maps, i);
			const char *base = strrchr(o->path, '/');

			if (base && !strcmp(base, "/libc.so.6")) {
				snprintf(libc, sizeof(libc), "%s", o->path);
				ASSERT_OK(runtime_kind__of_object(0, maps, o, &k), "libc");
				ASSERT_TRUE(!k.pack && k.how == RT_KIND_SKIPPED, "libc skipped by name");
			}
			if (base && !strcmp(base, "/vendor_runtime_v3.so")) {
				mapped = true;
				for (int r = 0; r < 50; r++)
					ASSERT_OK(runtime_kind__of_object(0, maps, o, &k), "mapped plugin");
				ASSERT_STREQ(pack_name(&k), "PJRT plugin", "mapped plugin");
				if (!stat(o->path, &st) &&
				    st.st_dev == makedev(o->dev_major, o->dev_minor))
					ASSERT_EQ(runtime_kind__parse_count(), before,
						  "mapping: the file parsed by path, not again");
			}
		}
		ASSERT_TRUE(mapped, "the plugin is in this process's maps");
		ASSERT_TRUE(libc[0], "libc is in this process's maps");
		/* Every object of this process, twice: the second time parses none. */
		for (size_t i = 0; maps && i < proc_maps__object_count(maps); i++)
			runtime_kind__of_object(0, maps, proc_maps__object(maps, i), &k);
		before = runtime_kind__parse_count();
		for (size_t i = 0; maps && i < proc_maps__object_count(maps); i++)
			runtime_kind__of_object(0, maps, proc_maps__object(maps, i), &k);
		ASSERT_EQ(runtime_kind__parse_count(), before, "a rescan parses nothing");
		proc_maps__free(maps);
		if (h)
			dlclose(h);
	}
}

/* runtime_attach recognises --library files and mappings the same way. */
static void test_runtime_attach(void)
{
	const char *libs[] = { at("vendor_runtime_v3.so"), at("libnothing.so") };
	struct runtime_attach_opts opts = {
		.sz = sizeof(opts), .libraries = libs, .n_libraries = 2,
	};
	struct runtime_attach *ra = runtime_attach__new(NULL, &opts);
	struct process_report *r = calloc(1, sizeof(*r));
	const struct attached_library *l;
	void *h = NULL;
	int n;

	if (!ASSERT_OK_PTR(ra, "runtime_attach__new") || !ASSERT_OK_PTR(r, "alloc"))
		goto out;
	ASSERT_EQ(runtime_attach__library_count(ra), 1, "--library: the plugin only");
	l = runtime_attach__library(ra, 0);
	if (ASSERT_OK_PTR(l, "library")) {
		ASSERT_STREQ(l->pack->name, "PJRT plugin", "--library pack");
		ASSERT_STREQ(l->recognised_by, "exports GetPjrtApi", "--library recognised by");
	}
	/* GetPjrtApi is probed by symbol, whatever the file's name. */
	{
		bool probe = false;

		for (size_t i = 0; i < runtime_attach__probe_count(ra); i++)
			probe |= !strcmp(runtime_attach__probe_at(ra, i)->entry->name,
					 "GetPjrtApi");
		ASSERT_TRUE(probe, "GetPjrtApi planned in vendor_runtime_v3.so");
	}
	h = dlopen(at("libgpu_shim.so"), RTLD_NOW | RTLD_LOCAL);
	ASSERT_OK_PTR(h, "dlopen CUDA shim");
	n = runtime_attach__add_process(ra, getpid(), r);
	ASSERT_GE(n, 1, "this process maps a runtime library");
	{
		bool cuda = false;

		for (unsigned int i = 0; i < r->n_libraries; i++)
			if (strstr(r->libraries[i]->path, "libgpu_shim.so"))
				cuda = !strcmp(r->libraries[i]->pack->name, "CUDA driver") &&
				       !strcmp(r->libraries[i]->recognised_by,
					       "exports cuLaunchKernel and cuInit");
		ASSERT_TRUE(cuda, "the mapped shim is the CUDA driver, by its exports");
	}
out:
	if (h)
		dlclose(h);
	free(r);
	runtime_attach__free(ra);
}

int main(void)
{
	cc = getenv("CC") && getenv("CC")[0] ? getenv("CC") : "cc";
	if (!make_dir()) {
		printf("SKIP: cannot make a temporary directory\n");
		return TEST_SKIP;
	}
	if (!build_all()) {
		printf("SKIP: no working C compiler (%s)\n", cc);
		remove_dir();
		return TEST_SKIP;
	}
	test_recognition();
	test_hash_lookup();
	test_cache();
	test_runtime_attach();
	remove_dir();
	return test_exit();
}
