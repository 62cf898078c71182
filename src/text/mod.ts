/**
 * Text kvlab reads and writes anywhere: redaction of secrets ({@link redactText}) and byte sizes as
 * tools print them.
 *
 * @module
 */

export * from "./redact.ts";
export * from "./units.ts";
