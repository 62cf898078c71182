/**
 * Memory: the key-count sweep and the sampler ({@link runMemorySweep}, {@link runMemorySampler}),
 * and the pure parsers of what they read (`INFO`, `docker stats`).
 *
 * @module
 */

export * from "./sweep.ts";
export * from "./info.ts";
export * from "./docker_stats.ts";
