/**
 * A full disk, said once and with the path: the operating system's `No space left on device
 * (os error 28)` (and polars' `parquet: … IO error: No space left on device`) name no file.
 *
 * @module
 */

/**
 * No space left where kvlab writes: names the path and what to do.
 *
 * @example
 * ```ts
 * import { DiskFullError } from "./disk.ts";
 * import assert from "node:assert/strict";
 * const e = new DiskFullError("data/tmp/r1/raw/stdout.txt");
 * assert.match(e.message, /^no space left on the disk of data\/tmp\/r1\/raw\/stdout\.txt: free/);
 * ```
 */
export class DiskFullError extends Error {
  /**
   * @param path The file or folder that could not be written.
   * @param hint What else to do, after "free some space there".
   */
  constructor(
    readonly path: string,
    hint = "then run the command again",
  ) {
    super(
      `no space left on the disk of ${path}: free some space there (or write elsewhere), ${hint}`,
    );
    this.name = "DiskFullError";
  }
}

/**
 * Whether an error says the disk (or the user's quota) is full.
 *
 * @param e What was thrown.
 * @returns `true` for ENOSPC and EDQUOT, whoever reported them.
 *
 * @example
 * ```ts
 * import { isDiskFull } from "./disk.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isDiskFull(new Error("No space left on device (os error 28)")));
 * assert.ok(isDiskFull(new Error("parquet: File out of specification: underlying IO error: No space left on device (os error 28)")));
 * assert.ok(!isDiskFull(new Error("Permission denied (os error 13)")));
 * ```
 */
export function isDiskFull(e: unknown): boolean {
  if (e instanceof DiskFullError) return true;
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return code === "ENOSPC" || code === "EDQUOT" ||
    /No space left on device|os error 28\b|Disk quota exceeded|os error 122\b/i.test(e.message);
}

/**
 * The error to throw for what a write at `path` threw: a {@link DiskFullError} naming the path
 * when the disk is full (unless it is one already), else the error itself.
 *
 * @param e What was thrown.
 * @param path What was being written.
 * @param hint What else to do (see {@link DiskFullError}).
 * @returns The error to throw.
 *
 * @example
 * ```ts
 * import { DiskFullError, diskFullAt } from "./disk.ts";
 * import assert from "node:assert/strict";
 * assert.ok(diskFullAt(new Error("No space left on device (os error 28)"), "d/x") instanceof DiskFullError);
 * const other = new Error("boom");
 * assert.equal(diskFullAt(other, "d/x"), other);
 * ```
 */
export function diskFullAt(e: unknown, path: string, hint?: string): unknown {
  if (e instanceof DiskFullError) return e;
  if (isDiskFull(e) || (mayBeDiskFull(e) && noSpaceAt(path))) return new DiskFullError(path, hint);
  return e;
}

/**
 * Whether an error may hide a full disk without saying so: polars' Parquet writer reports a
 * write that ran out of space as `parquet: File out of specification: Invalid thrift:
 * transport error` (or an IO error), and only a look at the disk tells.
 *
 * @param e What was thrown.
 * @returns `true` for the errors worth a look at the disk.
 *
 * @example
 * ```ts
 * import { mayBeDiskFull } from "./disk.ts";
 * import assert from "node:assert/strict";
 * assert.ok(mayBeDiskFull(new Error("parquet: File out of specification: Invalid thrift: transport error")));
 * assert.ok(!mayBeDiskFull(new TypeError("invalid --rate: 0")));
 * ```
 */
export function mayBeDiskFull(e: unknown): boolean {
  return e instanceof Error &&
    /Invalid thrift: transport error|IO error|Input\/output error|os error 5\b|short write/i
      .test(e.message);
}

/** Bytes a probe writes: a disk with less room than this is full for kvlab (a run needs more). */
export const PROBE_BYTES = 256 * 1024;

/**
 * Whether the disk holding `path` is full: writes (then removes) a {@link PROBE_BYTES} file in
 * the nearest existing folder of `path`. Deno has no `statfs`; a write is also what tells a
 * user's quota apart.
 *
 * @param path A file or folder, existing or not (its nearest existing folder is probed).
 * @returns `true` when the probe ran out of space; `false` when it fit or could not be made
 * for another reason.
 *
 * @example
 * ```ts
 * import { noSpaceAt } from "./disk.ts";
 * import assert from "node:assert/strict";
 * const dir = Deno.makeTempDirSync();
 * assert.equal(noSpaceAt(`${dir}/not/yet/there.parquet`), false);
 * assert.deepEqual([...Deno.readDirSync(dir)], []);
 * Deno.removeSync(dir);
 * ```
 */
export function noSpaceAt(path: string): boolean {
  let dir = path;
  for (;;) {
    try {
      if (Deno.statSync(dir).isDirectory) break;
    } catch { /* not there (yet) */ }
    const up = dir.replace(/\/+[^/]*$/, "");
    if (up === dir || up === "") {
      dir = up === "" && dir.startsWith("/") ? "/" : ".";
      break;
    }
    dir = up;
  }
  const probe = `${dir}/.kvlab-space-probe-${crypto.randomUUID()}`;
  let file: Deno.FsFile | undefined;
  try {
    file = Deno.openSync(probe, { write: true, createNew: true });
    const chunk = new Uint8Array(64 * 1024);
    for (let n = 0; n < PROBE_BYTES;) n += file.writeSync(chunk);
    file.syncDataSync();
    return false;
  } catch (e) {
    return isDiskFull(e);
  } finally {
    file?.close();
    try {
      Deno.removeSync(probe);
    } catch { /* never made */ }
  }
}

/**
 * Runs a write, turning a full disk into a {@link DiskFullError} naming `path`.
 *
 * @param path What `fn` writes.
 * @param fn The write.
 * @returns What `fn` returns.
 *
 * @example
 * ```ts
 * import { DiskFullError, writingAt } from "./disk.ts";
 * import assert from "node:assert/strict";
 * assert.equal(writingAt("d", () => 1), 1);
 * assert.throws(() => writingAt("d/runs", () => {
 *   throw new Error("No space left on device (os error 28)");
 * }), DiskFullError);
 * ```
 */
export function writingAt<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw diskFullAt(e, path);
  }
}

/**
 * Whether something is at `path` (following a symbolic link); false for anything `stat` refuses.
 *
 * @param path The path.
 * @returns True when `stat` finds it.
 *
 * @example
 * ```ts
 * import { pathExists } from "./disk.ts";
 * import assert from "node:assert/strict";
 * const dir = Deno.makeTempDirSync();
 * assert.equal(pathExists(dir), true);
 * assert.equal(pathExists(`${dir}/nothing`), false);
 * Deno.removeSync(dir);
 * ```
 */
export function pathExists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
