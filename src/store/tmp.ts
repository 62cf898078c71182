/**
 * Leftovers under a dataset's `tmp/`: a writer killed mid-way (kill -9, a power cut) leaves its
 * batch folder or stream copy there. Each entry ingest makes is marked with its writer
 * (`tmp/<entry>.writer.json`: host, boot, pid and start time, as claims record them); at the
 * start of a write, entries whose writer is gone by the claims' rule (`writerGone`) are removed.
 * An unmarked entry is removed only when a claim names it as its batch and that claim's writer
 * is gone; any other unmarked entry (a collector's run being written) is left alone.
 *
 * @module
 */

import { type ClaimWriter, thisWriter, writerGone } from "./_claims.ts";

const MARK = ".writer.json";

/**
 * Marks a `tmp/` entry as this process's.
 *
 * @param entry The entry's path (`<data>/tmp/<name>`).
 */
export function markWriter(entry: string): void {
  Deno.writeTextFileSync(entry + MARK, JSON.stringify(thisWriter()) + "\n");
}

/**
 * Removes an entry's mark (once the entry is committed or removed).
 *
 * @param entry The entry's path.
 */
export function unmarkWriter(entry: string): void {
  try {
    Deno.removeSync(entry + MARK);
  } catch { /* none */ }
}

/**
 * Removes the entries of `<dataDir>/tmp/` whose writer is gone.
 *
 * @param dataDir The dataset directory.
 * @returns The entries removed (names under `tmp/`).
 *
 * @example
 * ```ts
 * import { sweepTmp } from "./tmp.ts";
 * import assert from "node:assert/strict";
 * const dir = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${dir}/tmp/live`, { recursive: true });
 * assert.deepEqual(sweepTmp(dir), []); // unmarked and unclaimed: left alone
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function sweepTmp(dataDir: string): string[] {
  const tmp = `${dataDir}/tmp`;
  let names: string[];
  try {
    names = [...Deno.readDirSync(tmp)].map((e) => e.name);
  } catch {
    return [];
  }
  const removed: string[] = [];
  const entries = names.filter((n) => !n.endsWith(MARK));
  const unmarked = entries.filter((n) => !names.includes(n + MARK));
  const claimed = unmarked.length > 0 ? deadClaimBatches(dataDir) : new Set<string>();
  for (const n of entries) {
    const marked = names.includes(n + MARK);
    const gone = marked ? writerGone(readWriter(`${tmp}/${n}${MARK}`)) : claimed.has(n);
    if (!gone) continue;
    remove(`${tmp}/${n}`);
    if (marked) remove(`${tmp}/${n}${MARK}`);
    removed.push(n);
  }
  // marks left by a writer killed between its commit and removing the mark
  for (const m of names.filter((n) => n.endsWith(MARK))) {
    const entry = m.slice(0, -MARK.length);
    if (!names.includes(entry) && writerGone(readWriter(`${tmp}/${m}`))) remove(`${tmp}/${m}`);
  }
  return removed;
}

function readWriter(path: string): ClaimWriter | undefined {
  try {
    return JSON.parse(Deno.readTextFileSync(path));
  } catch {
    return undefined; // being written, or removed meanwhile
  }
}

/** Batches named by `claimed` claims whose writer is gone. */
function deadClaimBatches(dataDir: string): Set<string> {
  const out = new Set<string>();
  let dirs: Deno.DirEntry[];
  try {
    dirs = [...Deno.readDirSync(`${dataDir}/sources`)];
  } catch {
    return out;
  }
  for (const d of dirs) {
    if (!d.isDirectory) continue;
    for (const f of Deno.readDirSync(`${dataDir}/sources/${d.name}`)) {
      if (!f.name.endsWith(".json")) continue;
      try {
        const c = JSON.parse(Deno.readTextFileSync(`${dataDir}/sources/${d.name}/${f.name}`));
        if (c.state === "claimed" && c.batch && writerGone(c.writer)) out.add(String(c.batch));
      } catch { /* being written */ }
    }
  }
  return out;
}

function remove(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch { /* removed meanwhile */ }
}
