/**
 * The reply of `INFO` (Redis, Valkey, Dragonfly, KeyDB): sections and fields, sizes read as
 * bytes, and which server a reply names.
 *
 * @module
 */

export * from "./info.ts";
export * from "./format.ts";
