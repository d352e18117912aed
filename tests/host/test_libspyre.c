// SPDX-License-Identifier: MIT
/*
 * libspyre on a host without cards: argument checking, error strings and the
 * per-thread error detail.  Runs against the shared library and, built with
 * ASan/UBSan, against the library's objects.
 */
#include <pthread.h>

#include "spyre/spyre.h"
#include "tap.h"

#define LAST_STATUS SPYRE_ERROR_SYSTEM

/* Every status has its own non-empty text and name; unknown ones too. */
TEST(strerror_covers_every_status)
{
	for (int i = 0; i <= LAST_STATUS; i++) {
		const char *text = spyre_strerror((spyre_status)i);
		const char *name = spyre_status_name((spyre_status)i);

		ASSERT_TRUE(text && *text && name && !strncmp(name, "SPYRE_", 6));
		for (int j = 0; j < i; j++) {
			EXPECT_TRUE(strcmp(text, spyre_strerror((spyre_status)j)));
			EXPECT_TRUE(strcmp(name, spyre_status_name((spyre_status)j)));
		}
	}
	EXPECT_STREQ(spyre_status_name(SPYRE_ERROR_NO_DEVICE), "SPYRE_ERROR_NO_DEVICE");
	EXPECT_STREQ(spyre_strerror(SPYRE_SUCCESS), "success");
}

TEST(strerror_unknown_status_is_not_null)
{
	EXPECT_STREQ(spyre_strerror((spyre_status)(LAST_STATUS + 1)), "unknown libspyre status");
	EXPECT_STREQ(spyre_strerror((spyre_status)-1), "unknown libspyre status");
	EXPECT_STREQ(spyre_status_name((spyre_status)1000), "SPYRE_STATUS_UNKNOWN");
}

TEST(version_matches_header)
{
	EXPECT_EQ(spyre_version(), SPYRE_VERSION_MAJOR << 16 | SPYRE_VERSION_MINOR << 8 |
				   SPYRE_VERSION_PATCH);
}

TEST(count_rejects_null)
{
	EXPECT_EQ(spyre_device_count(NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "count is NULL");
}

/* The build machine has no Spyre card: discovery works and finds none. */
TEST(count_is_zero_without_cards)
{
	int count = -1;

	ASSERT_EQ(spyre_device_count(&count), SPYRE_SUCCESS);
	EXPECT_EQ(count, 0);
	EXPECT_STREQ(spyre_last_error_detail(), "");
}

TEST(open_rejects_bad_arguments)
{
	spyre_device *dev = (spyre_device *)&dev;

	EXPECT_EQ(spyre_device_open(0, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_device_open(-1, &dev), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(dev == NULL);
	EXPECT_STREQ(spyre_last_error_detail(), "negative index -1");
}

TEST(open_missing_index_is_no_device)
{
	spyre_device *dev = NULL;

	EXPECT_EQ(spyre_device_open(0, &dev), SPYRE_ERROR_NO_DEVICE);
	EXPECT_TRUE(dev == NULL);
	EXPECT_STREQ(spyre_last_error_detail(), "device 0 requested, 0 present");
	EXPECT_EQ(spyre_device_open(63, &dev), SPYRE_ERROR_NO_DEVICE);
}

TEST(open_pci_rejects_malformed_addresses)
{
	static const char *const bad[] = {
		"", "0", "zz:00.0", "00:00", "0000:01:00.0x", "01:00.8", "01:20.0",
		"00000:01:00.0", "0000:001:00.0", " 01:00.0", "01:00.0 ", "-1:00.0",
		"0000:01:00.00", "01:0.0", "+1:00.0", "0000;01:00.0",
	};
	spyre_device *dev;

	EXPECT_EQ(spyre_device_open_pci(NULL, &dev), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_device_open_pci("01:00.0", NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dev = (spyre_device *)&dev;
		if (spyre_device_open_pci(bad[i], &dev) != SPYRE_ERROR_INVALID_ARGUMENT) {
			tap_failed_checks++;
			printf("  # \"%s\" was not rejected as malformed\n", bad[i]);
		}
		EXPECT_TRUE(dev == NULL);
	}
}

TEST(open_pci_well_formed_but_absent)
{
	spyre_device *dev;

	EXPECT_EQ(spyre_device_open_pci("7f:1f.7", &dev), SPYRE_ERROR_NO_DEVICE);
	EXPECT_STREQ(spyre_last_error_detail(), "no Spyre card at 0000:7f:1f.7");
	EXPECT_EQ(spyre_device_open_pci("ABCD:01:00.0", &dev), SPYRE_ERROR_NO_DEVICE);
	EXPECT_STREQ(spyre_last_error_detail(), "no Spyre card at abcd:01:00.0");
}

TEST(properties_and_close_check_arguments)
{
	spyre_device_properties props;

	EXPECT_EQ(spyre_device_get_properties(NULL, &props), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "device is NULL");
	EXPECT_EQ(spyre_device_close(NULL), SPYRE_SUCCESS);
	EXPECT_STREQ(spyre_last_error_detail(), "");
}

static void *fail_in_thread(void *arg)
{
	int *seen_own_error = arg;

	spyre_device_count(NULL);
	*seen_own_error = !strcmp(spyre_last_error_detail(), "count is NULL");
	return NULL;
}

/* A failure on one thread does not show up in another thread's detail. */
TEST(error_detail_is_per_thread)
{
	pthread_t t;
	int seen_own_error = 0;

	spyre_device_close(NULL);
	ASSERT_EQ(pthread_create(&t, NULL, fail_in_thread, &seen_own_error), 0);
	ASSERT_EQ(pthread_join(t, NULL), 0);
	EXPECT_TRUE(seen_own_error);
	EXPECT_STREQ(spyre_last_error_detail(), "");
}

TAP_MAIN()
