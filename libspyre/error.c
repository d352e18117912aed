// SPDX-License-Identifier: MIT
/* Status codes, their strings and the per-thread error detail. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char last_error[256];

static const struct {
	const char *name;
	const char *text;
} status_strings[] = {
	[SPYRE_SUCCESS] = { "SPYRE_SUCCESS", "success" },
	[SPYRE_ERROR_INVALID_ARGUMENT] = { "SPYRE_ERROR_INVALID_ARGUMENT", "invalid argument" },
	[SPYRE_ERROR_NO_DEVICE] = { "SPYRE_ERROR_NO_DEVICE", "no such Spyre device" },
	[SPYRE_ERROR_PERMISSION] = { "SPYRE_ERROR_PERMISSION", "permission denied on the device" },
	[SPYRE_ERROR_OUT_OF_MEMORY] = { "SPYRE_ERROR_OUT_OF_MEMORY", "out of host memory" },
	[SPYRE_ERROR_DRIVER] = { "SPYRE_ERROR_DRIVER", "the driver rejected the request" },
	[SPYRE_ERROR_VERSION_MISMATCH] = { "SPYRE_ERROR_VERSION_MISMATCH",
					   "unsupported driver or card version" },
	[SPYRE_ERROR_SYSTEM] = { "SPYRE_ERROR_SYSTEM", "operating system error" },
};

#define NUM_STATUS (sizeof(status_strings) / sizeof(status_strings[0]))

SPYRE_EXPORT const char *spyre_strerror(spyre_status status)
{
	if ((unsigned int)status >= NUM_STATUS)
		return "unknown libspyre status";
	return status_strings[status].text;
}

SPYRE_EXPORT const char *spyre_status_name(spyre_status status)
{
	if ((unsigned int)status >= NUM_STATUS)
		return "SPYRE_STATUS_UNKNOWN";
	return status_strings[status].name;
}

SPYRE_EXPORT const char *spyre_last_error_detail(void)
{
	return last_error;
}

SPYRE_EXPORT uint32_t spyre_version(void)
{
	return SPYRE_VERSION_MAJOR << 16 | SPYRE_VERSION_MINOR << 8 | SPYRE_VERSION_PATCH;
}

spyre_status spyre_set_error(spyre_status status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return status;
}

void spyre_clear_error(void)
{
	last_error[0] = '\0';
}

spyre_status spyre_status_from_errno(int err)
{
	switch (err) {
	case EINVAL:
	case EFAULT:
		return SPYRE_ERROR_INVALID_ARGUMENT;
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return SPYRE_ERROR_NO_DEVICE;
	case EACCES:
	case EPERM:
		return SPYRE_ERROR_PERMISSION;
	case ENOMEM:
		return SPYRE_ERROR_OUT_OF_MEMORY;
	case ENOTTY:
	case EOPNOTSUPP:
		return SPYRE_ERROR_VERSION_MISMATCH;
	default:
		return SPYRE_ERROR_SYSTEM;
	}
}
