// SPDX-License-Identifier: MIT
/* Status codes, their strings and the per-thread error detail. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

static _Thread_local char last_error[512];

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
	[SPYRE_ERROR_NOT_READY] = { "SPYRE_ERROR_NOT_READY", "work is still pending" },
	[SPYRE_ERROR_INVALID_HANDLE] = { "SPYRE_ERROR_INVALID_HANDLE",
					 "invalid handle (freed or destroyed object)" },
	[SPYRE_ERROR_OUT_OF_DEVICE_MEMORY] = { "SPYRE_ERROR_OUT_OF_DEVICE_MEMORY",
					       "out of device memory" },
	[SPYRE_ERROR_DEVICE_FAULT] = { "SPYRE_ERROR_DEVICE_FAULT",
				       "queued work failed on the device" },
	[SPYRE_ERROR_TIMEOUT] = { "SPYRE_ERROR_TIMEOUT", "queued work hung; the device was reset" },
	[SPYRE_ERROR_DEVICE_LOST] = { "SPYRE_ERROR_DEVICE_LOST",
				      "the device refuses work after a fault; reopen it" },
	[SPYRE_ERROR_CAPTURE] = { "SPYRE_ERROR_CAPTURE",
				  "operation not allowed in this stream capture state" },
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
	spyre_log(SPYRE_LOG_INFO, "%s: %s", spyre_status_name(status), last_error);
	return status;
}

spyre_status spyre_done(spyre_status st)
{
	if (st == SPYRE_SUCCESS)
		last_error[0] = '\0';
	return st;
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
	case ECANCELED:
		return SPYRE_ERROR_DEVICE_LOST;
	case ETIME:
	case ETIMEDOUT:
		return SPYRE_ERROR_TIMEOUT;
	default:
		return SPYRE_ERROR_SYSTEM;
	}
}
