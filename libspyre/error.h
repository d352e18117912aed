/* SPDX-License-Identifier: MIT */
/* Status details (error.c) and SPYRE_LOG messages (log.c): the bottom layer. */
#ifndef SPYRE_ERROR_H
#define SPYRE_ERROR_H

#include "spyre/spyre.h"

#define SPYRE_EXPORT __attribute__((visibility("default")))

/* Record a failure for spyre_last_error_detail() and return it. */
spyre_status spyre_set_error(spyre_status status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void spyre_clear_error(void);
/* Return @st, clearing the detail on success. */
spyre_status spyre_done(spyre_status st);

/* Map an errno from open()/ioctl() to a status. */
spyre_status spyre_status_from_errno(int err);

enum spyre_log_level { SPYRE_LOG_OFF, SPYRE_LOG_ERROR, SPYRE_LOG_WARN, SPYRE_LOG_INFO,
		       SPYRE_LOG_DEBUG };
void spyre_log(enum spyre_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int spyre_log_enabled(enum spyre_log_level level);
/* SPYRE_LOG's value parsed ("warn" -> SPYRE_LOG_WARN); -1 if malformed. */
int spyre_log_parse(const char *s);

#endif /* SPYRE_ERROR_H */
