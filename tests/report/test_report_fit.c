// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Names fitted to a table's column (report_fit_name, report_fit_ends):
 * as they are when they fit; C++ argument lists folded first, then
 * template arguments from the innermost out; then a cut at a word
 * boundary marked "..."; never a cut inside a UTF-8 character; never wider
 * than asked; bounded work on hostile names (unmatched brackets, 100k
 * of '<').
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "report/report.h"

#define CUTLASS "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align4>" \
	"(cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align4::Params)"
#define NESTED "ns::Outer<ns::Inner<float, 4>, std::allocator<int>>::run(int, char const*)"
#define XMMA "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_warpgroupsize1x1x1_" \
	"execute_segment_k_off_kernel__5x_cublas"

static const char *fit(const char *name, size_t width)
{
	static char buf[1024];

	return report_fit_name(name, width, buf, sizeof(buf));
}

static void test_fits(void)
{
	ASSERT_STREQ(fit("fusion_11", 80), "fusion_11", "short name as it is");
	ASSERT_STREQ(fit(CUTLASS, 0), CUTLASS, "width 0: in full");
	ASSERT_STREQ(fit(CUTLASS, 80),
		     "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align4>(...)",
		     "arguments folded first");
	ASSERT_STREQ(fit(CUTLASS, 40), "void cutlass::Kernel2<...>(...)", "then templates");
	ASSERT_STREQ(fit(NESTED, 60), "ns::Outer<ns::Inner<...>, std::allocator<int>>::run(...)",
		     "innermost template first");
	ASSERT_STREQ(fit(NESTED, 30), "ns::Outer<...>::run(...)", "then the outer one");
	ASSERT_STREQ(fit(CUTLASS, 20), "void cutlass...", "cut before '::', marked");
	ASSERT_STREQ(fit(XMMA, 60), "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32...",
		     "cut at an underscore, marked");
}

static void test_bounds(void)
{
	static const char *const names[] = { CUTLASS, NESTED, XMMA,
		"a<<<<<<<b(((((c", "f(x)>>>>>>y<z", "x->y<a->b>(p->q)",
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" };
	char buf[1024];
	bool ok = true;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (size_t w = 6; w < 120; w++) {
			const char *a = report_fit_name(names[i], w, buf, sizeof(buf));
			size_t cols = report_text_cols(a), n = strlen(a);

			ok &= cols <= w;
			ok &= !n || ((unsigned char)a[n - 1] & 0xc0) != 0xc0;	/* no cut lead byte */
			ok &= report_text_cols(names[i]) <= w ? a == names[i] :
			      strstr(a, "...") != NULL;
			a = report_fit_ends(names[i], w, buf, sizeof(buf));
			ok &= report_text_cols(a) <= w;
		}
	ASSERT_TRUE(ok, "every width from 6 to 119: no wider than asked, marked when shortened");
	ASSERT_EQ(report_text_cols("\xc3\xa9t\xc3\xa9"), 3, "columns count characters");
	ASSERT_STREQ(report_fit_ends("pjrt_async_work_runner/1391642173629522130", 16, buf,
				     sizeof(buf)), "pjrt...629522130", "a thread keeps its end");
	ASSERT_STREQ(report_fit_ends("python3 (pid 469, tid 570)", 40, buf, sizeof(buf)),
		     "python3 (pid 469, tid 570)", "a label that fits as it is");
}

static void test_hostile(void)
{
	size_t n = 100000;
	char *s = malloc(n + 1), buf[256];
	long long t0 = test_now_ms();
	const char *a;

	if (!ASSERT_OK_PTR(s, "malloc"))
		return;
	memset(s, '<', n);
	s[n] = 0;
	a = report_fit_name(s, 60, buf, sizeof(buf));
	ASSERT_LE(report_text_cols(a), 60, "100k of '<': fitted");
	memset(s, '(', n / 2);
	memset(s + n / 2, ')', n / 2);
	a = report_fit_name(s, 60, buf, sizeof(buf));
	ASSERT_LE(report_text_cols(a), 60, "50k nested parentheses: fitted");
	ASSERT_LE(test_now_ms() - t0, 2000, "in bounded time");
	a = report_fit_name(CUTLASS, 80, buf, 8);
	ASSERT_LE(strlen(a), 7, "a small buffer is not overrun");
	free(s);
}

int main(void)
{
	test_fits();
	test_bounds();
	test_hostile();
	return test_exit();
}
