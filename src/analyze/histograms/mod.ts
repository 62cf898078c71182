/**
 * The `hdr_histograms` table read back: each row's histogram, repetitions merged as histograms
 * (never percentiles averaged) with HdrHistogram_c's percentile rule, and merged histograms as
 * cumulative distributions for the latency spectrum of memtier and kvlab's engines.
 *
 * @module
 */

export * from "./rows.ts";
export * from "./distribution.ts";
