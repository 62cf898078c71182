/**
 * The kinds of a failover run's errors (`../series.ts`'s interval counts): an error reply by its
 * first word, a lost socket by its error.
 *
 * @module
 */

import type { IntervalErrorKind } from "../series.ts";

/** A request without a reply within a failover run's request timeout. */
export class RequestTimeout extends Error {
  override name = "RequestTimeout";
}

/**
 * The kind of an error reply in a failover run's intervals.
 *
 * @example
 * ```ts
 * import { errorKind } from "./kinds.ts";
 * import assert from "node:assert/strict";
 * assert.equal(errorKind("CLUSTERDOWN The cluster is down"), "clusterdown");
 * assert.equal(errorKind("READONLY You can't write against a read only replica."), "readonly");
 * assert.equal(errorKind("MOVED 1 127.0.0.1:7000"), "other"); // one redirection too many
 * ```
 */
export function errorKind(text: string): IntervalErrorKind {
  if (text.startsWith("CLUSTERDOWN")) return "clusterdown";
  if (text.startsWith("READONLY")) return "readonly";
  return "other";
}

/**
 * The kind of a lost socket's request in a failover run.
 *
 * @example
 * ```ts
 * import { lostKind } from "./kinds.ts";
 * import assert from "node:assert/strict";
 * assert.equal(lostKind(new Deno.errors.ConnectionRefused("x")), "refused");
 * assert.equal(lostKind(new Deno.errors.ConnectionReset("x")), "reset");
 * assert.equal(lostKind(new Deno.errors.BrokenPipe("x")), "reset");
 * assert.equal(lostKind(new Error("no master serves slot 7")), "other");
 * ```
 */
export function lostKind(e: unknown): IntervalErrorKind {
  if (e instanceof Deno.errors.ConnectionRefused) return "refused";
  if (
    e instanceof Deno.errors.ConnectionReset || e instanceof Deno.errors.BrokenPipe ||
    e instanceof Deno.errors.ConnectionAborted || e instanceof Deno.errors.UnexpectedEof
  ) return "reset";
  if (e instanceof Error && (e.name === "RequestTimeout" || e instanceof Deno.errors.TimedOut)) {
    return "timeout";
  }
  return "other";
}
