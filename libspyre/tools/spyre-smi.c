// SPDX-License-Identifier: MIT
/* spyre-smi: list Spyre cards and their properties. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spyre/spyre.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: spyre-smi [--json]\n"
		     "List the Spyre cards this machine has and their properties.\n");
}

static void print_text(int index, const spyre_device_properties *p)
{
	printf("[%d] %s  %s  driver %s %d.%d  card interface %u.%u\n", index, p->pci_address,
	       p->devnode, p->driver_name, p->driver_version_major, p->driver_version_minor,
	       p->hw_version_major, p->hw_version_minor);
	printf("    id %04x:%04x rev %02x  cores %u  stick %u B  scratchpad %llu KiB/core\n",
	       p->vendor_id, p->device_id, p->revision, p->num_cores, p->stick_bytes,
	       (unsigned long long)p->scratchpad_bytes >> 10);
	printf("    device memory %llu MiB  irq vectors %u  irq self-test %s\n",
	       (unsigned long long)p->mem_bytes >> 20, p->num_irq_vectors,
	       p->irq_selftest_passed ? "passed" : "FAILED");
}

static void print_json(int index, const spyre_device_properties *p, int last)
{
	printf("    {\"index\": %d, \"pci_address\": \"%s\", \"devnode\": \"%s\", "
	       "\"driver\": \"%s\", \"driver_version\": \"%d.%d\", "
	       "\"vendor_id\": %u, \"device_id\": %u, \"revision\": %u, "
	       "\"hw_version\": \"%u.%u\", \"num_cores\": %u, \"stick_bytes\": %u, "
	       "\"scratchpad_bytes\": %llu, \"mem_bytes\": %llu, \"num_irq_vectors\": %u, "
	       "\"irq_selftest_passed\": %s}%s\n",
	       index, p->pci_address, p->devnode, p->driver_name, p->driver_version_major,
	       p->driver_version_minor, p->vendor_id, p->device_id, p->revision,
	       p->hw_version_major, p->hw_version_minor, p->num_cores, p->stick_bytes,
	       (unsigned long long)p->scratchpad_bytes, (unsigned long long)p->mem_bytes,
	       p->num_irq_vectors, p->irq_selftest_passed ? "true" : "false", last ? "" : ",");
}

static int fail(const char *what, spyre_status st)
{
	fprintf(stderr, "spyre-smi: %s: %s (%s)\n", what, spyre_strerror(st),
		spyre_last_error_detail());
	return 1;
}

int main(int argc, char **argv)
{
	int json = 0, count, i;
	spyre_status st;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "spyre-smi: unknown argument \"%s\"\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}

	st = spyre_device_count(&count);
	if (st)
		return fail("listing cards", st);

	if (json)
		printf("{\n  \"libspyre_version\": \"%u.%u.%u\",\n  \"devices\": [\n",
		       spyre_version() >> 16, (spyre_version() >> 8) & 0xff,
		       spyre_version() & 0xff);
	else
		printf("Spyre cards: %d\n", count);

	for (i = 0; i < count; i++) {
		spyre_device_properties props;
		spyre_device *dev;

		st = spyre_device_open(i, &dev);
		if (st)
			return fail("opening a card", st);
		st = spyre_device_get_properties(dev, &props);
		spyre_device_close(dev);
		if (st)
			return fail("reading properties", st);
		if (json)
			print_json(i, &props, i == count - 1);
		else
			print_text(i, &props);
	}
	if (json)
		printf("  ]\n}\n");
	return 0;
}
