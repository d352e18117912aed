// SPDX-License-Identifier: MIT
/*
 * The JSON document of the default view (--json) and of -q (--json -q):
 * one object per card with its processes.  Unknown values are null.
 * docs/runtime.md "spyre-smi" lists the keys.
 */
#include <inttypes.h>
#include <stdio.h>

#include "smi.h"

#define U64(v) ((unsigned long long)(v))

static void print_props(const struct smi_card *c)
{
	const spyre_device_properties *p = &c->props;

	printf("      \"index\": %d, \"pci_address\": \"%s\", \"devnode\": ", c->index,
	       p->pci_address);
	smi_json_str(stdout, p->devnode);
	printf(",\n      \"driver\": ");
	smi_json_str(stdout, p->driver_name);
	printf(", \"driver_version\": \"%d.%d\", \"vendor_id\": %u, \"device_id\": %u, "
	       "\"revision\": %u, \"hw_version\": \"%u.%u\",\n", p->driver_version_major,
	       p->driver_version_minor, p->vendor_id, p->device_id, p->revision,
	       p->hw_version_major, p->hw_version_minor);
	printf("      \"num_cores\": %u, \"stick_bytes\": %u, \"scratchpad_bytes\": %llu, "
	       "\"mem_bytes\": %llu, \"num_irq_vectors\": %u, \"irq_selftest_passed\": %s,\n",
	       p->num_cores, p->stick_bytes, U64(p->scratchpad_bytes), U64(p->mem_bytes),
	       p->num_irq_vectors, p->irq_selftest_passed ? "true" : "false");
}

static void print_nullable(const char *key, int have, unsigned long long v)
{
	if (have)
		printf("\"%s\": %llu", key, v);
	else
		printf("\"%s\": null", key);
}

/* "key": "s", or "key": null if @s is empty. */
static void print_str_or_null(const char *key, const char *s)
{
	printf("\"%s\": ", key);
	if (s[0])
		smi_json_str(stdout, s);
	else
		printf("null");
}

static const char *const smi_mem_sources[] = { "unknown", "debugfs", "fdinfo" };

void smi_json_use(const struct smi_card *c)
{
	printf("\"temperature_c\": ");
	smi_json_num(stdout, c->have_temp ? (double)c->temp_mc / 1000 : -1);
	printf(", \"power_w\": ");
	smi_json_num(stdout, c->have_power ? (double)c->power_uw / 1e6 : -1);
	printf(", \"utilization_percent\": ");
	smi_json_num(stdout, c->util_pct);
	printf(", \"memory_used_bytes\": %llu, \"memory_used_source\": \"%s\"",
	       U64(c->mem_used), smi_mem_sources[c->mem_source]);
}

static void print_use(const struct smi_card *c)
{
	printf("      ");
	smi_json_use(c);
	printf(", \"memory_total_bytes\": %llu,\n", U64(c->props.mem_bytes));
	printf("      \"state\": \"%s\", ", smi_card_state(c));
	print_nullable("banned_files", smi_card_banned(c) >= 0, (unsigned)smi_card_banned(c));
	printf(", ");
	print_nullable("reset_count", c->now.reset_count >= 0, (unsigned long)c->now.reset_count);
	printf(", ");
	print_str_or_null("timestamp_clock", c->clock);
	printf(",\n");
}

static void print_debugfs(const struct smi_debugfs *d)
{
	int q;

	print_nullable("open_files", d->have_contexts, (unsigned)d->open_files);
	printf(", ");
	print_nullable("mmu_faults", d->have_faults, U64(d->faults));
	printf(",\n      \"memory\": ");
	if (d->have_memory)
		printf("{\"device_used\": %llu, \"device_free\": %llu, \"device_largest_free\": %llu, "
		       "\"device_buffers\": %llu, \"mappable_total\": %llu, \"mappable_free\": %llu, "
		       "\"host_buffers\": %llu, \"host_bytes\": %llu}",
		       U64(d->device_used), U64(d->device_free), U64(d->device_largest_free),
		       U64(d->device_buffers), U64(d->mappable_total), U64(d->mappable_free),
		       U64(d->host_buffers), U64(d->host_bytes));
	else
		printf("null");
	printf(", \"queues\": ");
	if (!d->have_queues) {
		printf("null,\n");
		return;
	}
	for (q = 0; q < SMI_QUEUES; q++)
		printf("%s\"%s\"", q ? ", " : "[", smi_queue_states[d->queue_state[q] & 3]);
	printf("],\n");
}

/* -q's fields: the counters, their rates, where they came from, debugfs. */
static void print_detail(const struct smi_card *c)
{
	double cmds, bytes;

	smi_card_rates(c, &cmds, &bytes);
	printf("      ");
	print_nullable("busy_time_ns", c->now.ok, U64(c->now.busy_ns));
	printf(", ");
	print_nullable("commands_completed", c->now.ok, U64(c->now.commands));
	printf(", ");
	print_nullable("dma_bytes", c->now.ok, U64(c->now.dma_bytes));
	printf(",\n      \"commands_per_s\": ");
	smi_json_num(stdout, cmds);
	printf(", \"dma_bytes_per_s\": ");
	smi_json_num(stdout, bytes);
	printf(",\n      \"sysfs\": ");
	smi_json_str(stdout, c->sysfs);
	printf(", ");
	print_str_or_null("hwmon", c->hwmon);
	printf(", ");
	print_str_or_null("debugfs", c->debugfs);
	printf(",\n      ");
	print_debugfs(&c->dbg);
}

static void print_procs(const struct smi_proc *p, int n, const char *indent)
{
	int i;

	printf("[");
	for (i = 0; i < n; i++) {
		printf("%s\n%s{\"pid\": %d, \"name\": ", i ? "," : "", indent, p[i].pid);
		smi_json_str(stdout, p[i].name);
		printf(", \"clients\": %d, \"memory_bytes\": %llu, \"engine_time_ns\": %llu, "
		       "\"busy_percent\": ", p[i].clients, U64(p[i].mem_bytes), U64(p[i].engine_ns));
		smi_json_num(stdout, p[i].busy_pct);
		printf("}");
	}
	printf("%s]", n ? "\n      " : "");
}

void smi_print_json(const struct smi_snapshot *s, int full)
{
	char when[40];
	int i;

	printf("{\n  \"libspyre_version\": \"%u.%u.%u\",\n  \"timestamp\": \"%s\",\n"
	       "  \"sample_interval_ms\": %llu,\n  \"devices\": [\n",
	       spyre_version() >> 16, (spyre_version() >> 8) & 0xff, spyre_version() & 0xff,
	       smi_time(when, sizeof(when), 1), SMI_INTERVAL_NS / 1000000);
	for (i = 0; i < s->count; i++) {
		const struct smi_card *c = &s->cards[i];

		printf("    {\n");
		print_props(c);
		print_use(c);
		if (full)
			print_detail(c);
		printf("      \"processes\": ");
		print_procs(s->procs[i], s->nprocs[i], "        ");
		printf("\n    }%s\n", i == s->count - 1 ? "" : ",");
	}
	printf("  ]\n}\n");
}
