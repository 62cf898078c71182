/**
 * Test support: seed 000, the fixed-rate tables published in a blog post
 * (`data/raw/fixed-rate-latency/published-tables.md`), and what those tables say, for the
 * tests that read them back through kvlab.
 *
 * @module
 */

import { ROOT } from "./testdata.ts";

/** The published tables, as bundled. */
export const PUBLISHED_TABLES = `${ROOT}data/raw/fixed-rate-latency/published-tables.md`;

/**
 * The verdicts of "Redis 1 thread" in the published GET table at 816 connections, rate by rate:
 * sustained three times, NS at the fourth rate, and the four rates after it not run.
 */
export const REDIS_816_VERDICTS: readonly string[] = [
  ...Array(3).fill("sustained"),
  "NS",
  ...Array(4).fill("skipped"),
];
