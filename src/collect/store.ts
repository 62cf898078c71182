/**
 * Writing runs into a dataset directory: one folder per run, written under `tmp/` and renamed
 * into `runs/` in one step, so readers never see half a run and no run is ever overwritten.
 * Sources are claimed with one small file per content hash and labels
 * (`sources/<sha256>/<labels>.json`, created exclusively), so many writers on different hosts can share a dataset with no index file to
 * contend on.
 *
 * @module
 */

import { DatasetError } from "../errors.ts";
import { type RunsRow, SCHEMA_VERSION, type TableName, type TableRows } from "../schema.ts";
import { tableFrame } from "../frame.ts";
import { createHash } from "node:crypto";

/** kvlab's own version, stored with every run. */
export const KVLAB_VERSION = "0.1.0";

/** A raw file to keep with a run. */
export interface RawFile {
  /** File name inside `raw/` (no slashes). */
  name: string;
  /** Its bytes, exactly. */
  bytes: Uint8Array;
}

/** A `runs` row as a writer gives it: schema_version and kvlab_version are the store's. */
export type RunInput = Omit<RunsRow, "schema_version" | "kvlab_version">;

/** A table other than `runs`. */
export type RowTable = Exclude<TableName, "runs">;

/** Rows of the tables other than `runs`, by table name. */
export type RunTables = { [K in RowTable]?: TableRows[K][] };

/** Everything one run folder holds. */
export interface RunRecord {
  /** The `runs` row (schema_version and kvlab_version are filled in by the store). */
  run: RunInput;
  /** Rows of the other tables, by table name. */
  tables: RunTables;
  /** Raw files, byte for byte. */
  raw: RawFile[];
  /** Extra manifest content for run.json (warnings, block lines, …). */
  manifest?: Record<string, unknown>;
}

/**
 * A new run id: the UTC time to the second and 12 random hex digits, so ids sort by time and
 * two writers never make the same one.
 *
 * @example
 * ```ts
 * import { newRunId } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const id = newRunId(new Date("2026-11-29T21:12:35Z"));
 * assert.match(id, /^20261129T211235Z-[0-9a-f]{12}$/);
 * ```
 */
export function newRunId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  const rand = crypto.getRandomValues(new Uint8Array(6));
  return `${stamp}-${[...rand].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Writes one run folder, atomically: the folder is built under `DIR/tmp/<run_id>/` and renamed
 * to `DIR/runs/<run_id>` by {@link RunWriter.commit}. A long run can write its tables in parts
 * (`<table>.part-NNNN.parquet`) as it goes, so memory stays flat; a short one writes
 * `<table>.parquet`.
 */
export class RunWriter {
  readonly dataDir: string;
  readonly runId: string;
  readonly #tmp: string;
  readonly #parts = new Map<string, number>();
  #done = false;

  /**
   * @param dataDir The dataset directory (created if missing).
   * @param runId A new run id (see {@link newRunId}).
   * @throws {TypeError} For an id that is not a plain name.
   */
  constructor(dataDir: string, runId: string) {
    if (!/^[\w.-]+$/.test(runId) || runId.startsWith(".")) {
      throw new TypeError(`invalid run_id: ${runId}`);
    }
    this.dataDir = dataDir;
    this.runId = runId;
    this.#tmp = `${dataDir}/tmp/${runId}`;
    Deno.mkdirSync(`${this.#tmp}/raw`, { recursive: true });
  }

  /**
   * The path of a raw file inside the run being written, for callers that stream a large raw
   * output into it (it must then not be listed again in {@link commit}'s `raw`).
   *
   * @throws {TypeError} For a name with a slash or `.`/`..`.
   */
  rawPath(name: string): string {
    if (!/^[^/\\]+$/.test(name) || name === "." || name === "..") {
      throw new TypeError(`invalid raw file name: ${name}`);
    }
    if (!this.#rawNames.includes(name)) this.#rawNames.push(name);
    return `${this.#tmp}/raw/${name}`;
  }
  readonly #rawNames: string[] = [];

  /** Writes one part of a table (call again for the next part). Empty row lists are ignored. */
  writePart<T extends RowTable>(table: T, rows: readonly TableRows[T][]): void {
    if (rows.length === 0) return;
    const n = this.#parts.get(table) ?? 0;
    this.#parts.set(table, n + 1);
    tableFrame(table, rows).writeParquet(
      `${this.#tmp}/${table}.part-${String(n).padStart(4, "0")}.parquet`,
    );
  }

  /**
   * Writes the last rows, the runs row, raw files and run.json, then moves the folder into
   * `runs/` in one rename.
   *
   * @throws {DatasetError} If the run already exists (it is never overwritten).
   */
  commit(record: RunRecord): string {
    if (this.#done) throw new DatasetError(`run ${this.runId} was already committed or aborted`);
    const final = `${this.dataDir}/runs/${this.runId}`;
    try {
      const run: RunsRow = {
        schema_version: SCHEMA_VERSION,
        kvlab_version: KVLAB_VERSION,
        ...record.run,
      };
      if (run.run_id !== this.runId) {
        throw new TypeError(`run_id ${String(run.run_id)} is not ${this.runId}`);
      }
      for (const f of record.raw) {
        if (!/^[^/\\]+$/.test(f.name) || f.name === "." || f.name === "..") {
          throw new TypeError(`invalid raw file name: ${f.name}`);
        }
        Deno.writeFileSync(`${this.#tmp}/raw/${f.name}`, f.bytes);
      }
      tableFrame("runs", [run]).writeParquet(`${this.#tmp}/runs.parquet`);
      for (const name of Object.keys(record.tables) as RowTable[]) {
        const rows = record.tables[name] ?? [];
        if (rows.length === 0) continue;
        if (this.#parts.has(name)) this.writePart(name, rows);
        else tableFrame(name, rows).writeParquet(`${this.#tmp}/${name}.parquet`);
      }
      const tables = new Set(["runs", ...this.#parts.keys()]);
      for (const [n, r] of Object.entries(record.tables)) if (r.length > 0) tables.add(n);
      const manifest = {
        ...jsonSafe(run),
        raw_files: [...this.#rawNames, ...record.raw.map((f) => f.name)],
        tables: [...tables],
        ...record.manifest,
      };
      Deno.writeTextFileSync(`${this.#tmp}/run.json`, JSON.stringify(manifest, null, 2) + "\n");
      Deno.mkdirSync(`${this.dataDir}/runs`, { recursive: true });
      try {
        Deno.statSync(final);
        throw new DatasetError(`${final} already exists; runs are never overwritten`);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      Deno.renameSync(this.#tmp, final);
      this.#done = true;
      return this.runId;
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  /** Drops what was written (after an error). */
  abort(): void {
    this.#done = true;
    try {
      Deno.removeSync(this.#tmp, { recursive: true });
    } catch { /* already gone */ }
  }
}

/**
 * Writes one run folder into a dataset in one step (see {@link RunWriter}).
 *
 * @param dataDir The dataset directory (created if missing).
 * @param record What the run holds; `record.run.run_id` names the folder.
 * @returns The run id.
 * @throws {DatasetError} If a run with that id already exists.
 */
export function writeRun(dataDir: string, record: RunRecord): Promise<string> {
  try {
    return Promise.resolve(new RunWriter(dataDir, String(record.run.run_id ?? "")).commit(record));
  } catch (e) {
    return Promise.reject(e);
  }
}

function jsonSafe(row: RunsRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = v instanceof Date ? v.toISOString() : v;
  return out;
}

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
  sourcePath: string,
  state: SourceClaim["state"],
  now: Date,
  runIds: string[],
): SourceClaim {
  return {
    sha256: keyText(key),
    source_path: sourcePath,
    state,
    claimed_at: now.toISOString(),
    run_ids: runIds,
  };
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
}

/**
 * Claims a source file by content hash and labels. Exactly one writer wins a claim; the others
 * get the existing claim back.
 *
 * @param dataDir The dataset directory.
 * @param key The file's claim key (see {@link claimKey}).
 * @param sourcePath The file's path, recorded in the claim.
 * @param now The claim's time.
 * @returns `{ claimed: true }`, or `{ claimed: false, existing }` when the key is already
 * claimed (ingested, or being ingested by another writer).
 * @throws {TypeError} For a malformed key.
 */
export async function claimSource(
  dataDir: string,
  key: ClaimKey,
  sourcePath: string,
  now: Date,
): Promise<{ claimed: true } | { claimed: false; existing: SourceClaim }> {
  checkKey(key);
  await Deno.mkdir(claimDir(dataDir, key), { recursive: true });
  const path = claimPath(dataDir, key);
  const claim = claimOf(key, sourcePath, "claimed", now, []);
  try {
    const f = await Deno.open(path, { write: true, createNew: true });
    try {
      await f.write(new TextEncoder().encode(JSON.stringify(claim, null, 2) + "\n"));
    } finally {
      f.close();
    }
    return { claimed: true };
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    try {
      return { claimed: false, existing: JSON.parse(await Deno.readTextFile(path)) };
    } catch {
      // The other writer has created the file but not written it yet.
      return { claimed: false, existing: { ...claim, source_path: "?", run_ids: [] } };
    }
  }
}

/**
 * Marks a claim done with the runs it produced (atomic replace of the claim file).
 *
 * @param dataDir The dataset directory.
 * @param key The claim's key.
 * @param sourcePath The file's path.
 * @param runIds The runs written from it.
 * @param now The time recorded.
 */
export async function completeClaim(
  dataDir: string,
  key: ClaimKey,
  sourcePath: string,
  runIds: string[],
  now: Date,
): Promise<void> {
  const path = claimPath(dataDir, key);
  const claim = claimOf(key, sourcePath, "done", now, runIds);
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
