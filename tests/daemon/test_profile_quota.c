// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ProfilerService quotas' ledger (daemon/profile_quota.h): captures,
 * bytes and full detail counted per logdir and client over the last hour;
 * each limit refuses with its name and when it frees; entries older than
 * the hour count no more; clients and logdirs are apart; 0 means no limit;
 * a flood past the ledger's size forgets the oldest, never grows.
 */
#include "test.h"
#include "daemon/profile_quota.h"

#define S 1000000000ull
#define H (3600 * S)

static void test_captures(void)
{
	struct profile_quota_limits l = { .captures = 2 };
	struct profile_quota *q = profile_quota__new(&l);
	char why[256];

	if (!ASSERT_OK_PTR(q, "new"))
		return;
	for (int i = 0; i < 2; i++) {
		ASSERT_OK(profile_quota__check(q, 0, "uid 1000", 10 * S + i, 0, why, sizeof(why)),
			  "within");
		profile_quota__charge(q, 0, "uid 1000", 10 * S + i, 0);
	}
	ASSERT_EQ(profile_quota__check(q, 0, "uid 1000", 20 * S, 0, why, sizeof(why)), -EDQUOT,
		  "the third in the hour");
	ASSERT_STRCONTAINS(why, "profile-quota-captures", "names the quota");
	ASSERT_STRCONTAINS(why, "3590 s", "says when it frees");
	ASSERT_OK(profile_quota__check(q, 0, "uid 0", 20 * S, 0, why, sizeof(why)),
		  "another client's is its own");
	ASSERT_OK(profile_quota__check(q, 1, "uid 1000", 20 * S, 0, why, sizeof(why)),
		  "another logdir's is apart");
	ASSERT_OK(profile_quota__check(q, 0, "uid 1000", 10 * S + H, 0, why, sizeof(why)),
		  "an hour later the first has left");
	profile_quota__free(q);
}

static void test_bytes_and_detail(void)
{
	struct profile_quota_limits l = { .bytes = 100 << 20, .detail_ns = 60 * S };
	struct profile_quota *q = profile_quota__new(&l);
	char why[256];
	uint64_t id;

	if (!ASSERT_OK_PTR(q, "new"))
		return;
	id = profile_quota__charge(q, 0, "10.0.0.7", S, 40 * S);
	ASSERT_OK(profile_quota__check(q, 0, "10.0.0.7", 2 * S, 20 * S, why, sizeof(why)),
		  "detail exactly to the limit");
	ASSERT_EQ(profile_quota__check(q, 0, "10.0.0.7", 2 * S, 21 * S, why, sizeof(why)),
		  -EDQUOT, "detail past it");
	ASSERT_STRCONTAINS(why, "full detail", "says which");
	ASSERT_OK(profile_quota__check(q, 0, "10.0.0.7", 2 * S, 0, why, sizeof(why)),
		  "no full detail asked: not counted");
	profile_quota__add_bytes(q, id, 100 << 20);
	ASSERT_EQ(profile_quota__check(q, 0, "10.0.0.7", 3 * S, 0, why, sizeof(why)), -EDQUOT,
		  "the bytes written count");
	ASSERT_STRCONTAINS(why, "profile-quota-bytes", "names the quota");
	profile_quota__add_bytes(q, 12345, 1);	/* an id it forgot: nothing */
	profile_quota__free(q);
}

static void test_unlimited_and_flood(void)
{
	struct profile_quota_limits none = { 0 }, l = { .captures = 3 };
	struct profile_quota *q = profile_quota__new(&none);
	char why[256];

	if (!ASSERT_OK_PTR(q, "new"))
		return;
	for (uint64_t i = 0; i < 3 * PROFILE_QUOTA_MAX_ENTRIES; i++)
		profile_quota__charge(q, 0, "uid 1", S + i, S);
	ASSERT_OK(profile_quota__check(q, 0, "uid 1", 2 * S, H, why, sizeof(why)),
		  "0: no limit, whatever the flood");
	profile_quota__free(q);

	q = profile_quota__new(&l);
	if (!ASSERT_OK_PTR(q, "new"))
		return;
	/* The ledger full of one client: another's three still count. */
	for (int i = 0; i < 3; i++)
		profile_quota__charge(q, 0, "uid 2", S, 0);
	for (uint64_t i = 0; i < PROFILE_QUOTA_MAX_ENTRIES - 3; i++)
		profile_quota__charge(q, 0, "uid 1", 2 * S + i, 0);
	ASSERT_EQ(profile_quota__check(q, 0, "uid 2", 3 * S, 0, why, sizeof(why)), -EDQUOT,
		  "uid 2's three, with the ledger full");
	profile_quota__charge(q, 0, "uid 1", 4 * S, 0);
	ASSERT_OK(profile_quota__check(q, 0, "uid 2", 4 * S, 0, why, sizeof(why)),
		  "past the ledger's size the oldest is forgotten");
	profile_quota__free(q);
}

int main(void)
{
	test_captures();
	test_bytes_and_detail();
	test_unlimited_and_flood();
	return test_exit();
}
