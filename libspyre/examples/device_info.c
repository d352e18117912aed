// SPDX-License-Identifier: MIT
/*
 * The smallest libspyre program: open the first card and print what it is.
 * Build: cc device_info.c $(pkg-config --cflags --libs spyre)
 */
#include <stdio.h>

#include "spyre/spyre.h"

int main(void)
{
	spyre_device_properties props;
	spyre_device *dev;
	spyre_status st;

	st = spyre_device_open(0, &dev);
	if (st != SPYRE_SUCCESS) {
		fprintf(stderr, "open: %s: %s\n", spyre_strerror(st), spyre_last_error_detail());
		return 1;
	}
	spyre_device_get_properties(dev, &props);
	printf("%s: %u cores x %llu KiB scratchpad, %llu MiB device memory\n",
	       props.pci_address, props.num_cores,
	       (unsigned long long)props.scratchpad_bytes >> 10,
	       (unsigned long long)props.mem_bytes >> 20);
	spyre_device_close(dev);
	return 0;
}
