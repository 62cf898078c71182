/**
 * Memory: the key-count sweep and the sampler ({@link runMemorySweep}, {@link runMemorySampler});
 * the parsers of what they read (`INFO`, `docker stats`) are in `../formats/`.
 *
 * @module
 */

export * from "./sweep.ts";
export * from "./tool.ts";
