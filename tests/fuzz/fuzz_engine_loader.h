/* SPDX-License-Identifier: MIT */
/* One fuzz input through the engine: load, and run if it loads; the status. */
#ifndef SPYRE_FUZZ_ENGINE_LOADER_H
#define SPYRE_FUZZ_ENGINE_LOADER_H

#include <stddef.h>
#include <stdint.h>

int fuzz_engine_one(const uint8_t *data, size_t size);

#endif
