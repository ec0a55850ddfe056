// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elf_image against files whose truth is known another way: this test binary
 * and libc, as the dynamic loader mapped them (dl_iterate_phdr gives the
 * loaded program headers and notes, dlsym/dlvsym the symbol addresses), and,
 * where binutils is installed, readelf -n and nm -D. Runs unprivileged.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test.h"
#include "discover/elf_image.h"

struct loaded {
	const char *want;	/* substring of the name; "" = main program */
	char path[4096];
	uintptr_t bias;
	const ElfW(Phdr) *phdr;
	size_t phnum;
	bool found;
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded *l = data;
	bool match = l->want[0] ? strstr(info->dlpi_name, l->want) != NULL
				: info->dlpi_name[0] == '\0';

	if (!match || l->found)
		return 0;
	l->found = true;
	l->bias = info->dlpi_addr;
	l->phdr = info->dlpi_phdr;
	l->phnum = info->dlpi_phnum;
	if (l->want[0])
		snprintf(l->path, sizeof(l->path), "%s", info->dlpi_name);
	return 1;
}

/* The build id from the loaded PT_NOTE segments: not read from the file. */
static bool loaded_build_id(const struct loaded *l, char *hex, size_t size)
{
	for (size_t i = 0; i < l->phnum; i++) {
		const ElfW(Phdr) *ph = &l->phdr[i];
		const unsigned char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(l->bias + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			size_t align = ph->p_align == 8 ? 8 : 4;
			size_t name_sz = (nh->n_namesz + align - 1) & ~(align - 1);
			size_t desc_sz = (nh->n_descsz + align - 1) & ~(align - 1);
			const unsigned char *name = p + sizeof(*nh);
			const unsigned char *desc = name + name_sz;

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && 2 * nh->n_descsz + 1 <= size) {
				for (size_t j = 0; j < nh->n_descsz; j++)
					sprintf(hex + 2 * j, "%02x", desc[j]);
				return true;
			}
			p = desc + desc_sz;
		}
	}
	return false;
}

/* Runs a command and returns its whole stdout (NULL when it cannot run). */
static char *run_tool(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	size_t cap = 1 << 20, len = 0, n;
	char *buf;
	int st;

	if (!f)
		return NULL;
	buf = malloc(cap + 1);
	if (!buf) {
		pclose(f);
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *nb = realloc(buf, 2 * cap + 1);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	st = pclose(f);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool have_tool(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/usr/bin/%s", name);
	return access(path, X_OK) == 0;
}

/* "00000000000d54e0 W getpid@@GLIBC_2.2.5" -> the value, from nm -D. */
static bool nm_value(const char *nm_out, const char *name, uint64_t *value)
{
	char needle[256];
	const char *p;

	snprintf(needle, sizeof(needle), " %s\n", name);
	p = strstr(nm_out, needle);
	if (!p)
		return false;
	/* Back to the start of the line. */
	while (p > nm_out && p[-1] != '\n')
		p--;
	return sscanf(p, "%" SCNx64, value) == 1;
}

/* File offset of a vaddr by the segment math, from our own phdr parse. */
static bool manual_offset(const char *path, uint64_t vaddr, uint64_t *off)
{
	Elf64_Ehdr eh;
	bool ok = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) != sizeof(ph))
			goto out;
		if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			ok = true;
			break;
		}
	}
out:
	close(fd);
	return ok;
}

int main(void);

static int data_word = 42;

static void test_self(void)
{
	struct loaded self = { .want = "" };
	struct elf_image *img;
	struct elf_symbol sym;
	char want[128], got[128];
	unsigned char file_bytes[16];
	uint64_t off, vaddr;
	size_t nload = 0;
	ssize_t n;
	int err;

	dl_iterate_phdr(find_loaded, &self);
	if (!ASSERT_TRUE(self.found, "main program in dl_iterate_phdr"))
		return;
	n = readlink("/proc/self/exe", self.path, sizeof(self.path) - 1);
	if (!ASSERT_GE(n, 1, "readlink /proc/self/exe"))
		return;
	self.path[n] = '\0';

	img = elf_image__open(self.path);
	if (!ASSERT_OK_PTR(img, "open self"))
		return;
	ASSERT_STREQ(elf_image__path(img), self.path, "path kept");
	ASSERT_EQ(elf_image__machine(img), EM_X86_64, "x86-64");

	/* Build id: libelf's read of the file against the loaded note. */
	if (loaded_build_id(&self, want, sizeof(want))) {
		err = elf_image__build_id(img, got, sizeof(got));
		if (ASSERT_OK(err, "self build id"))
			ASSERT_STREQ(got, want, "self build id = loaded note");
		ASSERT_EQ(elf_image__build_id(img, got, 8), -ENOSPC, "small buffer");
	} else {
		printf("note: this test binary has no build id\n");
		ASSERT_EQ(elf_image__build_id(img, got, sizeof(got)), -ENOENT, "no build id");
	}

	/* PT_LOAD segments match the loaded program headers. */
	for (size_t i = 0; i < self.phnum; i++) {
		const ElfW(Phdr) *ph = &self.phdr[i];
		struct elf_segment seg;

		if (ph->p_type != PT_LOAD)
			continue;
		if (!ASSERT_OK(elf_image__segment(img, nload, &seg), "segment"))
			break;
		ASSERT_EQ(seg.vaddr, ph->p_vaddr, "segment vaddr");
		ASSERT_EQ(seg.memsz, ph->p_memsz, "segment memsz");
		ASSERT_EQ(seg.offset, ph->p_offset, "segment offset");
		ASSERT_EQ(seg.filesz, ph->p_filesz, "segment filesz");
		ASSERT_EQ(seg.flags, ph->p_flags, "segment flags");
		nload++;
	}
	ASSERT_EQ(elf_image__segment_count(img), nload, "PT_LOAD count");
	{
		struct elf_segment seg;

		ASSERT_EQ(elf_image__segment(img, nload, &seg), -ERANGE, "segment past end");
	}

	/* main (in .symtab): its address, and its bytes in the file. */
	err = elf_image__find_symbol(img, "main", &sym);
	if (ASSERT_OK(err, "find main")) {
		ASSERT_EQ(sym.value + self.bias, (uintptr_t)&main, "main address");
		ASSERT_EQ(sym.type, STT_FUNC, "main is a function");
		ASSERT_EQ(sym.binding, STB_GLOBAL, "main is global");
		ASSERT_TRUE(sym.size > 0, "main has a size");
		ASSERT_TRUE(elf_image__vaddr_is_exec(img, sym.value), "main is in text");
		err = elf_image__vaddr_to_offset(img, sym.value, &off);
		ASSERT_OK(err, "main to offset");
		if (manual_offset(self.path, sym.value, &vaddr))
			ASSERT_EQ(off, vaddr, "offset = segment math");
		ASSERT_OK(elf_image__offset_to_vaddr(img, off, &vaddr), "offset to vaddr");
		ASSERT_EQ(vaddr, sym.value, "round trip");
		n = elf_image__read(img, sym.value, file_bytes, sizeof(file_bytes));
		ASSERT_EQ(n, sizeof(file_bytes), "read 16 bytes of main");
		ASSERT_TRUE(!memcmp(file_bytes, (void *)&main, sizeof(file_bytes)),
			    "file bytes = loaded bytes");
		ASSERT_EQ(elf_image__read(img, sym.value, file_bytes, 0), 0, "read 0 bytes");
	}

	/* Data is not executable; an address past every segment is nowhere. */
	ASSERT_FALSE(elf_image__vaddr_is_exec(img, (uintptr_t)&data_word - self.bias),
		     "data is not exec");
	ASSERT_EQ(elf_image__vaddr_to_offset(img, UINT64_MAX - 16, &off), -ENOENT,
		  "no segment");
	ASSERT_EQ(elf_image__read(img, UINT64_MAX - 16, file_bytes, 4), -ENOENT,
		  "read nowhere");
	ASSERT_EQ(elf_image__find_symbol(img, "no_such_function_at_all", &sym),
		  -ENOENT, "unknown symbol");
	/* A variable is not a function. */
	ASSERT_EQ(elf_image__find_symbol(img, "data_word", &sym), -ENOENT,
		  "objects are not functions");
	elf_image__free(img);
}

static void test_libc(void)
{
	struct loaded libc = { .want = "libc.so" };
	struct elf_image *img;
	struct elf_symbol def, hid, plain;
	char want[128], got[128];
	void *addr;
	uint64_t off, man;
	char *out;
	int err;

	dl_iterate_phdr(find_loaded, &libc);
	if (!ASSERT_TRUE(libc.found, "libc in dl_iterate_phdr"))
		return;
	img = elf_image__open(libc.path);
	if (!ASSERT_OK_PTR(img, "open libc"))
		return;

	if (ASSERT_TRUE(loaded_build_id(&libc, want, sizeof(want)), "libc has a build id") &&
	    ASSERT_OK(elf_image__build_id(img, got, sizeof(got)), "libc build id"))
		ASSERT_STREQ(got, want, "libc build id = loaded note");

	/* .dynsym lookups against the dynamic linker's own answers. */
	err = elf_image__find_symbol(img, "getpid", &plain);
	if (ASSERT_OK(err, "find getpid")) {
		addr = dlsym(RTLD_DEFAULT, "getpid");
		ASSERT_EQ(plain.value + libc.bias, (uintptr_t)addr, "getpid = dlsym");
		ASSERT_TRUE(plain.from_dynsym, "getpid from .dynsym");
	}

	/* Versions: realpath@@GLIBC_2.3 is the default, realpath@GLIBC_2.2.5 the old one. */
	if (ASSERT_OK(elf_image__find_symbol(img, "realpath", &plain), "realpath") &&
	    ASSERT_OK(elf_image__find_symbol(img, "realpath@@GLIBC_2.3", &def), "realpath@@") &&
	    ASSERT_OK(elf_image__find_symbol(img, "realpath@GLIBC_2.2.5", &hid), "realpath@")) {
		ASSERT_EQ(plain.value, def.value, "unversioned name = default version");
		ASSERT_NEQ(def.value, hid.value, "two versions, two functions");
		/* libc's own, not a sanitizer's interceptor of the same name. */
		void *libc_handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

		ASSERT_EQ(def.value + libc.bias,
			  (uintptr_t)(libc_handle ? dlsym(libc_handle, "realpath") : NULL),
			  "default = dlsym");
		if (libc_handle)
			dlclose(libc_handle);
		ASSERT_EQ(hid.value + libc.bias,
			  (uintptr_t)dlvsym(RTLD_DEFAULT, "realpath", "GLIBC_2.2.5"),
			  "old version = dlvsym");
	}
	ASSERT_EQ(elf_image__find_symbol(img, "realpath@GLIBC_2.3", &hid), -ENOENT,
		  "@ does not match the default version");
	ASSERT_EQ(elf_image__find_symbol(img, "realpath@@GLIBC_9.9", &hid), -ENOENT,
		  "unknown version");
	/* memcpy@@GLIBC_2.14 is an IFUNC: the type says so. */
	if (ASSERT_OK(elf_image__find_symbol(img, "memcpy@@GLIBC_2.14", &def), "memcpy@@"))
		ASSERT_EQ(def.type, STT_GNU_IFUNC, "memcpy is an ifunc");

	/* nm -D and the segment math, where binutils is installed. */
	if (have_tool("nm")) {
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s'", libc.path);
		out = run_tool(cmd);
		if (ASSERT_OK_PTR(out, "nm -D libc")) {
			const char *names[] = { "getpid@@GLIBC_2.2.5", "fopen@@GLIBC_2.2.5",
						"realpath@GLIBC_2.2.5", "memcpy@@GLIBC_2.14" };

			for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
				struct elf_symbol s;
				uint64_t v;

				if (!nm_value(out, names[i], &v)) {
					printf("note: nm -D does not list %s\n", names[i]);
					continue;
				}
				if (!ASSERT_OK(elf_image__find_symbol(img, names[i], &s), names[i]))
					continue;
				ASSERT_EQ(s.value, v, "value = nm -D");
				if (ASSERT_OK(elf_image__vaddr_to_offset(img, s.value, &off), "to offset") &&
				    ASSERT_TRUE(manual_offset(libc.path, v, &man), "segment math"))
					ASSERT_EQ(off, man, "file offset = nm value + segment math");
			}
			free(out);
		}
	} else {
		test_skip_part("no nm; the nm -D cross-check did not run");
	}
	if (have_tool("readelf")) {
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "readelf -n '%s'", libc.path);
		out = run_tool(cmd);
		if (ASSERT_OK_PTR(out, "readelf -n libc") &&
		    ASSERT_OK(elf_image__build_id(img, got, sizeof(got)), "build id"))
			ASSERT_STRCONTAINS(out, got, "build id = readelf -n");
		free(out);
	} else {
		test_skip_part("no readelf; the readelf -n cross-check did not run");
	}
	elf_image__free(img);
}

static void test_errors(void)
{
	struct elf_image *img;

	elf_image__free(NULL);
	errno = 0;
	img = elf_image__open("/nonexistent/acceltrace/lib.so");
	ASSERT_TRUE(!img && errno == ENOENT, "missing file: ENOENT");
	errno = 0;
	img = elf_image__open("/proc/self/status");
	ASSERT_TRUE(!img && errno == ENOEXEC, "not ELF: ENOEXEC");
	elf_image__free(img);
}

/* Builds a .so with cc: two static functions of one name give -ENOTUNIQ. */
static void test_ambiguous_local(void)
{
	char dir[4096], src1[4200], src2[4200], so[4200], cmd[16384];
	const char *cc = getenv("CC") && getenv("CC")[0] ? getenv("CC") : "cc";
	struct elf_image *img;
	struct elf_symbol sym;
	FILE *f;
	ssize_t n;

	/* Next to the test binary, else in $TMPDIR or /tmp (unprivileged). */
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 64);
	if (n <= 0)
		return;
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';
	strcat(dir, "/elf-test.XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir) - 64, "%s/elf-test.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(dir)) {
			test_skip_part("cannot make a temporary directory; skipped the .so check");
			return;
		}
	}
	snprintf(src1, sizeof(src1), "%s/a.c", dir);
	snprintf(src2, sizeof(src2), "%s/b.c", dir);
	snprintf(so, sizeof(so), "%s/libdup.so", dir);
	f = fopen(src1, "w");
	if (f) {
		fputs("static __attribute__((noinline,used)) int helper(int x) { return x + 1; }\n"
		      "int one(int x) { return helper(x); }\n", f);
		fclose(f);
	}
	f = fopen(src2, "w");
	if (f) {
		fputs("static __attribute__((noinline,used)) int helper(int x) { return x * 7; }\n"
		      "int two(int x) { return helper(x); }\n", f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "%s -O2 -fPIC -shared -o '%s' '%s' '%s' 2>/dev/null",
		 cc, so, src1, src2);
	if (system(cmd) != 0) {
		test_skip_part("no working C compiler; skipped the .so check");
		goto out;
	}
	img = elf_image__open(so);
	if (ASSERT_OK_PTR(img, "open built .so")) {
		ASSERT_EQ(elf_image__find_symbol(img, "helper", &sym), -ENOTUNIQ,
			  "two local functions of one name");
		ASSERT_OK(elf_image__find_symbol(img, "one", &sym), "global one");
		ASSERT_TRUE(sym.from_dynsym, "one from .dynsym");
		elf_image__free(img);
	}
out:
	unlink(src1);
	unlink(src2);
	unlink(so);
	rmdir(dir);
}

int main(void)
{
	test_self();
	test_libc();
	test_errors();
	test_ambiguous_local();
	return test_exit();
}
