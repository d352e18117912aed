/* SPDX-License-Identifier: MIT */
/* A GEM buffer of this open (made and closed by driver.c). */
#ifndef SPYRE_GEM_H
#define SPYRE_GEM_H

#include <stdint.h>

struct spyre_gem {
	uint32_t handle;		/* 0: none */
	uint64_t va;			/* device address in this open's address space */
	uint64_t size;
	void *map;			/* CPU mapping, or NULL */
};

#endif /* SPYRE_GEM_H */
