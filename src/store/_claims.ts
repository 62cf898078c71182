/**
 * Claims of source files: one small file per content hash and labels
 * (`sources/<sha256>/<labels>.json`, created exclusively), so many writers on different hosts can
 * share a dataset with no index file to contend on. A claim records its writer (host, process
 * id and start time) and the batch its runs go to: a claim whose batch never came and whose
 * process is gone (on this host) is taken over, so an ingest killed half-way is retried with no
 * manual step.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { BATCHES } from "./layout.ts";
import { pathExists } from "../system/disk.ts";

/**
 * What names a claim: the content hash of a source file and a digest of the labels it is
 * ingested under (server, label, tool, …). The same bytes under the same labels are one claim;
 * under other labels, another claim in the same folder.
 */
export interface ClaimKey {
  /** sha256 of the file's bytes, 64 hex digits. */
  readonly sha256: string;
  /** 12 hex digits naming the labels (see {@link claimKey}), or null for "any labels". */
  readonly labels: string | null;
}

/**
 * The claim key of a file's bytes under some labels.
 *
 * @param sha256 The file's sha256, 64 hex digits.
 * @param labels The labels the file is ingested under (compared as JSON, in key order), or
 * null for one claim whatever the labels.
 * @returns The key.
 * @throws {TypeError} For a hash that is not 64 hex digits.
 *
 * @example
 * ```ts
 * import { claimKey } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const sha = "0".repeat(64);
 * const k = claimKey(sha, { server: "redis" });
 * assert.match(k.labels ?? "", /^[0-9a-f]{12}$/);
 * assert.deepEqual(claimKey(sha, { server: "redis" }), k);
 * assert.notEqual(claimKey(sha, { server: "valkey" }).labels, k.labels);
 * assert.equal(claimKey(sha, null).labels, null);
 * ```
 */
export function claimKey(
  sha256: string,
  labels: Readonly<Record<string, unknown>> | null,
): ClaimKey {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new TypeError(`invalid source hash: ${sha256}`);
  if (labels === null) return { sha256, labels: null };
  const digest = createHash("sha256").update(JSON.stringify(labels)).digest("hex").slice(0, 12);
  return { sha256, labels: digest };
}

/** The key as `claimSource` writes it into the claim file: `<sha256>-<labels>` or `<sha256>`. */
function keyText(key: ClaimKey): string {
  return key.labels === null ? key.sha256 : `${key.sha256}-${key.labels}`;
}

function claimOf(
  key: ClaimKey,
  { sourcePath, state, now, runIds, batch }: {
    sourcePath: string;
    state: SourceClaim["state"];
    now: Date;
    runIds: string[];
    batch?: string;
  },
): SourceClaim {
  return {
    sha256: keyText(key),
    source_path: sourcePath,
    state,
    claimed_at: now.toISOString(),
    run_ids: runIds,
    ...(state === "claimed" ? { writer: thisWriter(), batch: batch ?? null } : {}),
  };
}

/** The writer that holds a claim: enough to tell, on its host, whether it is still running. */
export interface ClaimWriter {
  host: string;
  /** `/proc/sys/kernel/random/boot_id` (pids repeat after a reboot), or null. */
  boot_id: string | null;
  pid: number;
  /** Start time of the process (clock ticks since boot, `/proc/<pid>/stat`), or null. */
  start: number | null;
  /** Boot time of the host (s since the epoch, from its uptime), or null. */
  boot_time?: number | null;
}

let me: ClaimWriter | undefined;

/** This process as a claim's writer. */
export function thisWriter(): ClaimWriter {
  me ??= {
    host: hostName(),
    boot_id: readOrNull("/proc/sys/kernel/random/boot_id")?.trim() ?? null,
    pid: Deno.pid,
    start: procStart(Deno.pid),
    boot_time: bootTime(),
  };
  return me;
}

function bootTime(): number | null {
  try {
    return Math.round(Date.now() / 1000 - Deno.osUptime());
  } catch {
    return null;
  }
}

function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}

function readOrNull(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

/** Field 22 of `/proc/<pid>/stat` (after the command name, which may hold spaces). */
function procStart(pid: number): number | null {
  const stat = readOrNull(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const start = Number(fields[19]);
  return Number.isFinite(start) ? start : null;
}

/**
 * Whether a claim's writer is known to be gone: it ran on this host since its last boot, and
 * no process with its pid and start time runs now. A writer on another host is never known to
 * be gone.
 *
 * @param w The claim's writer.
 * @returns True when the writer is gone.
 */
export function writerGone(w: ClaimWriter | undefined): boolean {
  if (!w || typeof w.pid !== "number") return false;
  const mine = thisWriter();
  if (w.host !== mine.host) return false;
  // rebooted since: every process of then is gone
  if (w.boot_id && mine.boot_id) {
    if (w.boot_id !== mine.boot_id) return true;
  } else if (typeof w.boot_time === "number" && typeof mine.boot_time === "number") {
    if (Math.abs(w.boot_time - mine.boot_time) > 120) return true;
  } else return false;
  if (w.pid === mine.pid) return w.start !== null && mine.start !== null && w.start !== mine.start;
  const start = procStart(w.pid);
  if (start !== null) return w.start !== null && start !== w.start;
  return !alive(w.pid);
}

/** Whether a process runs (signal it SIGCONT: no effect on a running process). */
function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch (e) {
    return !(e instanceof Deno.errors.NotFound); // ESRCH: gone; EPERM or no permission: unknown
  }
}

function checkKey(key: ClaimKey): void {
  if (!/^[0-9a-f]{64}$/.test(key.sha256) || !/^([0-9a-f]{12})?$/.test(key.labels ?? "")) {
    throw new TypeError(`invalid source key: ${keyText(key)}`);
  }
}

/** What `sources/<sha256>/<labels>.json` says about an ingested file. */
export interface SourceClaim {
  /** The claim key, `<sha256>-<labels>`. */
  sha256: string;
  source_path: string;
  state: "claimed" | "done";
  claimed_at: string;
  run_ids: string[];
  /** While claimed: the writer (to tell a dead one). */
  writer?: ClaimWriter;
  /** While claimed: the batch the runs go to (`batches/<batch>` once they are visible). */
  batch?: string | null;
}

/**
 * Claims a source file by content hash and labels. Exactly one writer wins a claim; the others
 * get the existing claim back. A claim left `claimed` by a writer that is gone (see
 * {@link writerGone}) whose batch never came into place is taken over by one writer.
 *
 * @param dataDir The dataset directory.
 * @param key The file's claim key (see {@link claimKey}).
 * @param claim `sourcePath`, the file's path, recorded in the claim; `now`, the claim's time;
 * `batch`, the batch the file's runs will go to, recorded so a reader of the claim can tell
 * whether they are visible.
 * @returns `{ claimed: true }`, or `{ claimed: false, existing }` when the key is already
 * claimed (ingested, or being ingested by another writer).
 * @throws {TypeError} For a malformed key.
 */
export async function claimSource(
  dataDir: string,
  key: ClaimKey,
  { sourcePath, now, batch }: { sourcePath: string; now: Date; batch?: string },
): Promise<{ claimed: true } | { claimed: false; existing: SourceClaim }> {
  checkKey(key);
  await Deno.mkdir(claimDir(dataDir, key), { recursive: true });
  const path = claimPath(dataDir, key);
  const claim = claimOf(key, { sourcePath, state: "claimed", now, runIds: [], batch });
  const text = JSON.stringify(claim, null, 2) + "\n";
  try {
    const f = await Deno.open(path, { write: true, createNew: true });
    try {
      await f.write(new TextEncoder().encode(text));
    } finally {
      f.close();
    }
    return { claimed: true };
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    let existing: SourceClaim;
    try {
      existing = JSON.parse(await Deno.readTextFile(path));
    } catch {
      // The other writer has created the file but not written it yet.
      return { claimed: false, existing: { ...claim, source_path: "?", run_ids: [] } };
    }
    if (await takeOver(dataDir, { path, existing, text })) return { claimed: true };
    return { claimed: false, existing };
  }
}

/**
 * Takes over a claim whose writer is gone and whose batch is not in place. One taker wins: it
 * creates `<claim>.takeover-<pid>-<start>` of the dead writer exclusively, then replaces the
 * claim in one rename.
 */
async function takeOver(
  dataDir: string,
  { path, existing, text }: { path: string; existing: SourceClaim; text: string },
): Promise<boolean> {
  if (existing.state !== "claimed" || !writerGone(existing.writer)) return false;
  if (existing.batch && pathExists(`${dataDir}/${BATCHES}/${existing.batch}`)) return false;
  const w = existing.writer!;
  const marker = `${path}.takeover-${w.pid}-${w.start ?? 0}`;
  try {
    await Deno.writeTextFile(marker, text, { createNew: true });
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) return false;
    throw e;
  }
  // a taker that read the dead claim late may find it replaced already by the winner
  const now: SourceClaim = JSON.parse(await Deno.readTextFile(path));
  if (now.writer?.pid !== w.pid || now.writer?.start !== w.start || now.state !== "claimed") {
    await Deno.remove(marker).catch(() => {});
    return false;
  }
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(tmp, text);
  await Deno.rename(tmp, path);
  await Deno.remove(marker).catch(() => {});
  return true;
}

/**
 * Marks a claim done with the runs it produced (atomic replace of the claim file).
 *
 * @param dataDir The dataset directory.
 * @param key The claim's key.
 * @param done `sourcePath`, the file's path; `runIds`, the runs written from it; `now`, the
 * time recorded.
 */
export async function completeClaim(
  dataDir: string,
  key: ClaimKey,
  { sourcePath, runIds, now }: { sourcePath: string; runIds: string[]; now: Date },
): Promise<void> {
  const path = claimPath(dataDir, key);
  const claim = claimOf(key, { sourcePath, state: "done", now, runIds });

  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(claim, null, 2) + "\n");
  await Deno.rename(tmp, path);
}

/**
 * Drops a claim (after a failed ingest, so the file can be tried again).
 *
 * @param dataDir The dataset directory.
 * @param key The claim's key.
 */
export async function releaseClaim(dataDir: string, key: ClaimKey): Promise<void> {
  await Deno.remove(claimPath(dataDir, key)).catch(() => {});
  // the folder goes too when no other claim of the same bytes is in it
  await Deno.remove(claimDir(dataDir, key)).catch(() => {});
}

/**
 * Claims of the same bytes under other labels than `key`'s (claims being written are skipped).
 *
 * @param dataDir The dataset directory.
 * @param key A claim key.
 * @returns The source path and run ids of each other claim.
 */
export function otherClaims(
  dataDir: string,
  key: ClaimKey,
): { path: string; runIds: string[] }[] {
  const out: { path: string; runIds: string[] }[] = [];
  const dir = claimDir(dataDir, key);
  const mine = claimPath(dataDir, key);
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (!e.name.endsWith(".json") || `${dir}/${e.name}` === mine) continue;
      try {
        const c = JSON.parse(Deno.readTextFileSync(`${dir}/${e.name}`));
        out.push({ path: c.source_path, runIds: c.run_ids ?? [] });
      } catch { /* being written */ }
    }
  } catch { /* no claims for these bytes yet */ }
  return out;
}

/**
 * The folder of a source's claims: `sources/<sha256>/`.
 *
 * @param dataDir The dataset directory.
 * @param key A claim key (only its hash counts).
 * @returns The folder's path.
 */
export function claimDir(dataDir: string, key: ClaimKey): string {
  return `${dataDir}/sources/${key.sha256}`;
}

/**
 * A claim file: `sources/<sha256>/<labels>.json` (or `sources/<sha256>/any.json`).
 *
 * @param dataDir The dataset directory.
 * @param key A claim key.
 * @returns The claim file's path.
 */
export function claimPath(dataDir: string, key: ClaimKey): string {
  return `${claimDir(dataDir, key)}/${key.labels ?? "any"}.json`;
}
