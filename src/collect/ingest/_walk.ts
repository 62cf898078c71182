/**
 * Walking ingest's inputs: files as given, folders recursively in name order. Symbolic links
 * are followed (to files and to folders); each folder is walked once by its real path, so a
 * link cycle ends. Hidden entries and the dataset being written are skipped.
 *
 * @module
 */

import { STDIN_PATHS } from "./_source.ts";

/** One input of ingest. */
export interface WalkedInput {
  path: string;
  /** Named by the user (not found inside a folder). */
  given: boolean;
  /** A folder given by the user in which no file was found. */
  empty?: boolean;
}

/**
 * The inputs under the given paths.
 *
 * @param paths Files and folders (`-` for standard input).
 * @param skip Folders not to walk into (compared by real path).
 * @returns Inputs one by one; a folder with no file comes as `{ empty: true }`.
 * @throws {Deno.errors.NotFound} When a given path does not exist.
 */
export async function* walkInputs(
  paths: readonly string[],
  skip: readonly string[] = [],
): AsyncGenerator<WalkedInput> {
  const skipReal = new Set(skip.map(realOrSelf));
  const seen = new Set<string>();
  for (const p of paths) {
    if (STDIN_PATHS.includes(p)) {
      yield { path: p, given: true };
      continue;
    }
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(p);
    } catch (e) {
      // a broken link is reported by the file's outcome
      if (e instanceof Deno.errors.NotFound && isLink(p)) {
        yield { path: p, given: true };
        continue;
      }
      throw e;
    }
    if (!info.isDirectory) {
      yield { path: p, given: true };
      continue;
    }
    let found = 0;
    for await (const f of walkFolder(p, skipReal, seen)) {
      found++;
      yield f;
    }
    if (found === 0) yield { path: p, given: true, empty: true };
  }
}

async function* walkFolder(
  dir: string,
  skipReal: ReadonlySet<string>,
  seen: Set<string>,
): AsyncGenerator<WalkedInput> {
  const real = realOrSelf(dir);
  if (skipReal.has(real) || seen.has(real)) return;
  seen.add(real);
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(dir)) if (!e.name.startsWith(".")) entries.push(e);
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const e of entries) {
    const child = `${dir.replace(/\/+$/, "")}/${e.name}`;
    let isDir = e.isDirectory;
    if (e.isSymlink) {
      try {
        isDir = (await Deno.stat(child)).isDirectory;
      } catch { /* broken: reported by the file's outcome */ }
    }
    if (isDir) yield* walkFolder(child, skipReal, seen);
    else yield { path: child, given: false };
  }
}

function isLink(p: string): boolean {
  try {
    return Deno.lstatSync(p).isSymlink;
  } catch {
    return false;
  }
}

/**
 * A path's real path, or the path itself when it cannot be resolved.
 *
 * @param p A path.
 * @returns Its real path.
 */
export function realOrSelf(p: string): string {
  try {
    return Deno.realPathSync(p);
  } catch {
    return p;
  }
}

/**
 * The non-hidden names of a folder, listed once per folder (memtier runs are found by their
 * files' names).
 *
 * @returns A lookup from folder to names.
 */
export function folderNames(): (dir: string) => readonly string[] {
  const cache = new Map<string, string[]>();
  return (dir) => {
    let names = cache.get(dir);
    if (!names) {
      try {
        names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => !n.startsWith("."));
      } catch {
        names = [];
      }
      if (cache.size > 1000) cache.clear();
      cache.set(dir, names);
    }
    return names;
  };
}
