// SPDX-License-Identifier: MIT
/*
 * Costs of op firings and DRAM transfers.  Each cost comes from a parameter
 * in struct spyre_timing_params; docs/engine.md gives each one's source.
 */
#include <math.h>

#include "timing.h"

uint64_t timing_cycles_to_ticks(double cycles)
{
    return (uint64_t)ceil(cycles * TICKS_PER_CYCLE);
}

/* SFP passes over the data per op: an estimate, see docs/engine.md. */
static double sfp_passes(uint8_t opcode)
{
    switch (opcode) {
    case SPK_OPC_GELU:
        return 4;
    case SPK_OPC_SILU:
        return 3;
    case SPK_OPC_EXP:
    case SPK_OPC_RSQRT:
        return 2;
    case SPK_OPC_SOFTMAX:
        /*
         * max, subtract, exp (2), sum, scale, fp16 unpack and pack:
         * brings the published 512x1024 case (23.67 us) to the model.
         */
        return 8;
    case SPK_OPC_LOG_SOFTMAX:
        /* softmax's passes with a log and a subtract for the scale */
        return 9;
    case SPK_OPC_LAYERNORM:
        return 4;
    case SPK_OPC_RMSNORM:
        return 3;
    default:
        return 1;
    }
}

uint64_t timing_op_ticks(const struct spyre_timing_params *t,
                         const struct op_desc *op, bool *on_pe)
{
    double elems = 0, cycles;

    *on_pe = op->opcode == SPK_OPC_MATMUL;
    if (*on_pe) {
        /* The array works on whole sticks of N: padding lanes cost time. */
        double n_pad = (double)sticks_for(op->row_elems, op->dtype_in) *
                       dtype_stick_elems(op->dtype_in);
        double rate = t->pe_macs_per_cycle *
                      (op->dtype_in == SPK_DT_FP32 ? t->pe_fp32_factor : 1.0);

        cycles = (double)op->rows * op->k * n_pad / rate + t->pe_firing_cycles;
        return timing_cycles_to_ticks(cycles);
    }
    for (unsigned i = 0; i < op->num_in; i++) {
        elems += (double)op->in_sticks[i] * dtype_stick_elems(op->dtype_in);
    }
    if (!op->num_in) {
        elems = (double)op->out_sticks * dtype_stick_elems(op->dtype_out);
    }
    cycles = elems * sfp_passes(op->opcode) / t->sfp_lanes_per_cycle +
             t->op_firing_cycles;
    return timing_cycles_to_ticks(cycles);
}

static uint64_t ns_to_ticks(const struct spyre_timing_params *t, double ns)
{
    return timing_cycles_to_ticks(ns * t->clock_ghz);
}

uint64_t dram_transfer(struct dram_model *d,
                       const struct spyre_timing_params *t, uint64_t ready,
                       uint64_t bytes, bool write, uint64_t *arrival)
{
    uint64_t start = ready > d->free_at ? ready : d->free_at;

    if (d->last_dir >= 0 && d->last_dir != (int)write) {
        start += ns_to_ticks(t, t->dram_turnaround_ns);
    }
    d->last_dir = write;
    d->free_at = start + ns_to_ticks(t, (double)bytes / t->dram_bytes_per_ns);
    *arrival = d->free_at + (write ? 0 : ns_to_ticks(t, t->dram_latency_ns));
    return d->free_at;
}

uint64_t timing_port_ticks(const struct spyre_timing_params *t, uint64_t bytes,
                           uint32_t runs)
{
    return timing_cycles_to_ticks((double)bytes / t->spad_bytes_per_cycle +
                                  (double)runs * t->spad_request_cycles);
}
