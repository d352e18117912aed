/* SPDX-License-Identifier: MIT */
/* Opening and closing cards (device.c). */
#ifndef SPYRE_DEVICE_H
#define SPYRE_DEVICE_H

#include "object.h"

/* DEVICE_LOST with a detail once the driver banned this device's file. */
spyre_status spyre_device_check_alive(spyre_device *dev);
/* Run @hook once when @dev closes, after its streams finished (once per
 * hook, however often it is added). */
spyre_status spyre_device_on_close(spyre_device *dev, spyre_close_hook hook);

#endif /* SPYRE_DEVICE_H */
