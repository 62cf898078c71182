/**
 * kvlab's version, read from `deno.json` (its one place): stored on every run as
 * `kvlab_version`, and printed by `kvlab --version`.
 *
 * @example
 * ```ts
 * import { KVLAB_VERSION } from "./version.ts";
 * import assert from "node:assert/strict";
 * assert.match(KVLAB_VERSION, /^\d+\.\d+\.\d+/);
 * ```
 *
 * @module
 */

import meta from "../deno.json" with { type: "json" };

/** This kvlab's version (`deno.json`'s `version`). */
export const KVLAB_VERSION: string = meta.version;
