/**
 * Per-cell locks, so that two `kvlab run` of one plan into one dataset never run a cell twice,
 * and the check of children left running by a kvlab that died.
 *
 * A cell's lock is `DIR/locks/cells/<sha256 of the cell id, 32 hex>.lock`, made exclusively
 * (written under a temporary name, then hard-linked into place: it appears whole or not at
 * all) and holding the owner's pid, its start time, the host name, the cell and when it was
 * taken. The runner takes it before a cell runs and removes it once the cell's run is
 * committed (visible in `runs/`). Another runner that finds it **waits** for it (and says who
 * holds it), then skips the cell if the run it waited for is complete, or runs it if not:
 * waiting rather than skipping keeps two runners from loading one server with two cells at
 * once, which would skew both measurements.
 *
 * A lock is taken over when its owner is gone: on the same host, when its pid no longer runs
 * or now belongs to a process that started at another time; on another host (a dataset on a
 * shared disk), when it has not been refreshed for {@link LOCK_LEASE_MS} (the owner refreshes
 * its mtime every quarter of that). Take-overs go through `<lock>.takeover`, made exclusively,
 * so that two runners never both remove a lock and both take the cell.
 *
 * Children: with a pid folder (`DIR/locks/children`, see `DenoProcessRunner`), every tool that
 * runs has a pid file. {@link reapOrphans} stops the children whose kvlab is gone, after
 * checking by start time that the pid is still that child.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { diskFullAt } from "../system/disk.ts";
import {
  type ChildPidFile,
  hostName,
  killGroup,
  processStart,
  sameProcess,
} from "../system/pids.ts";

/**
 * How long a lock held by a runner on another host stays valid without a refresh: 1 hour.
 * (On the same host the owner's pid is checked instead.)
 */
export const LOCK_LEASE_MS = 60 * 60 * 1000;

/** A take-over older than this (its runner died in the middle) is removed: 60 s. */
const TAKEOVER_STALE_MS = 60_000;

/** Who holds a cell lock (the lock file's content). */
export interface LockOwner {
  /** The cell. */
  cell: string;
  /** The holding kvlab's pid. */
  pid: number;
  /** Its start time, to tell a reused pid apart. */
  pid_start: string | null;
  /** Its host. */
  hostname: string;
  /** When it took the lock (ISO 8601). */
  started_at: string;
}

/** A lock this process holds. */
export interface HeldLock {
  /** The cell. */
  readonly cell: string;
  /** The lock file. */
  readonly path: string;
  /** The lock file's content, to check it is still ours when it is released. */
  readonly text: string;
  /** Whether a dead runner's lock was taken over (its cell may be half-run: check it). */
  readonly tookOver: boolean;
}

/** Options of {@link CellLocks}. */
export interface CellLocksOptions {
  /** @default {LOCK_LEASE_MS} */
  leaseMs?: number;
  /** @default {() => new Date()} */
  now?: () => Date;
}

/** The cell locks of one dataset. */
export class CellLocks {
  readonly #dir: string;
  readonly #lease: number;
  readonly #now: () => Date;
  readonly #refresh = new Map<string, ReturnType<typeof setInterval>>();
  #start: string | null | undefined;

  /**
   * @param data The dataset directory.
   * @param options The lease and the clock.
   */
  constructor(data: string, options: CellLocksOptions = {}) {
    this.#dir = `${data}/locks/cells`;
    this.#lease = options.leaseMs ?? LOCK_LEASE_MS;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Takes a cell's lock if it is free (or its owner is gone).
   *
   * @param cell The cell id.
   * @returns The lock, or who holds it.
   * @throws {DiskFullError} When the lock cannot be written for lack of space.
   */
  tryAcquire(cell: string): HeldLock | { held: LockOwner } {
    const path = this.lockPath(cell);
    let tookOver = false;
    for (let attempt = 0; attempt < 5; attempt++) {
      const text = this.#create(path, cell);
      if (text !== undefined) {
        this.#keepFresh(path);
        return { cell, path, text, tookOver };
      }
      const found = readLock(path);
      if (found === undefined) continue; // released meanwhile
      if (!this.#stale(path, found.owner)) return { held: found.owner };
      if (takeOver(path, found.text)) tookOver = true;
    }
    const found = readLock(path);
    return { held: found?.owner ?? unknownOwner(cell) };
  }

  /**
   * Releases a lock (once its run is committed). A lock that is no longer ours is left alone.
   *
   * @param lock The lock.
   */
  release(lock: HeldLock): void {
    const timer = this.#refresh.get(lock.path);
    if (timer !== undefined) clearInterval(timer);
    this.#refresh.delete(lock.path);
    try {
      if (Deno.readTextFileSync(lock.path) === lock.text) Deno.removeSync(lock.path);
    } catch { /* gone already */ }
  }

  /**
   * The lock file of a cell.
   *
   * @param cell The cell id.
   * @returns Its path.
   */
  lockPath(cell: string): string {
    const digest = createHash("sha256").update(cell).digest("hex").slice(0, 32);
    return `${this.#dir}/${digest}.lock`;
  }

  /** Creates the lock with our content; undefined when it exists. */
  #create(path: string, cell: string): string | undefined {
    this.#start ??= processStart(Deno.pid);
    const owner: LockOwner = {
      cell,
      pid: Deno.pid,
      pid_start: this.#start,
      hostname: hostName(),
      started_at: this.#now().toISOString(),
    };
    const text = JSON.stringify(owner) + "\n";
    const tmp = `${path}.${Deno.pid}-${crypto.randomUUID().slice(0, 8)}.tmp`;
    try {
      Deno.mkdirSync(this.#dir, { recursive: true });
      Deno.writeTextFileSync(tmp, text);
      Deno.linkSync(tmp, path);
      return text;
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) return undefined;
      throw diskFullAt(e, path, "then run the plan again (complete cells are skipped)");
    } finally {
      try {
        Deno.removeSync(tmp);
      } catch { /* not written */ }
    }
  }

  /** Whether a lock's owner is gone (see the module doc). */
  #stale(path: string, owner: LockOwner): boolean {
    if (owner.hostname === hostName()) {
      if (owner.pid === Deno.pid && owner.pid_start === this.#start) return false;
      const alive = sameProcess(owner.pid, owner.pid_start);
      if (alive !== undefined) return !alive;
    }
    try {
      const mtime = Deno.statSync(path).mtime?.getTime() ?? 0;
      return this.#now().getTime() - mtime > this.#lease;
    } catch {
      return false;
    }
  }

  /** Refreshes the lock's mtime every quarter lease, for runners on other hosts. */
  #keepFresh(path: string): void {
    const timer = setInterval(() => {
      try {
        const t = this.#now();
        Deno.utimeSync(path, t, t);
      } catch { /* released or gone */ }
    }, Math.max(1000, this.#lease / 4));
    Deno.unrefTimer(timer);
    this.#refresh.set(path, timer);
  }
}

/** The lock's owner and raw text, or undefined when there is no lock file. */
function readLock(path: string): { owner: LockOwner; text: string } | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
  try {
    const o = JSON.parse(text);
    if (typeof o.pid === "number" && typeof o.hostname === "string") return { owner: o, text };
  } catch { /* not ours: kept as held by an unknown owner, until its lease runs out */ }
  return { owner: { ...unknownOwner(""), pid: 0 }, text };
}

function unknownOwner(cell: string): LockOwner {
  return { cell, pid: 0, pid_start: null, hostname: "?", started_at: "?" };
}

/**
 * Removes a stale lock if it still holds `text`, under `<lock>.takeover` (made exclusively).
 * @returns Whether the stale lock was removed.
 */
function takeOver(path: string, text: string): boolean {
  const guard = `${path}.takeover`;
  try {
    Deno.writeTextFileSync(guard, `${Deno.pid}\n`, { createNew: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw diskFullAt(e, guard);
    try {
      const age = Date.now() - (Deno.statSync(guard).mtime?.getTime() ?? 0);
      if (age > TAKEOVER_STALE_MS) Deno.removeSync(guard);
    } catch { /* removed by its owner */ }
    return false;
  }
  try {
    if (Deno.readTextFileSync(path) !== text) return false;
    Deno.removeSync(path);
    return true;
  } catch {
    return false;
  } finally {
    Deno.removeSync(guard);
  }
}

/** A child found running from a kvlab that is gone, and what was done. */
export interface Orphan {
  /** The child's pid. */
  pid: number;
  /** Its program (file name). */
  program: string;
  /** The kvlab that started it. */
  kvlabPid: number;
  /** `stopped` (SIGTERM to its group, SIGKILL after 2 s), or `unchecked` when `ps` failed. */
  action: "stopped" | "unchecked";
}

/**
 * Stops the children whose kvlab is gone: reads `<dir>/<pid>.json` pid files, and for each
 * child on this host whose kvlab no longer runs, checks by its start time that the pid is
 * still that child, then stops its process group. Pid files of children that ended are
 * removed. Children of a kvlab that still runs, or on another host, are left alone.
 *
 * @param dir The pid folder (`DIR/locks/children`).
 * @returns The children found and what was done.
 */
export async function reapOrphans(dir: string): Promise<Orphan[]> {
  let names: string[];
  try {
    names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  const out: Orphan[] = [];
  for (const name of names) {
    const path = `${dir}/${name}`;
    let f: ChildPidFile;
    try {
      f = JSON.parse(Deno.readTextFileSync(path));
    } catch {
      continue;
    }
    if (f.hostname !== hostName() || sameProcess(f.kvlab_pid, f.kvlab_start) !== false) continue;
    const child = sameProcess(f.pid, f.start);
    const found = { pid: f.pid, program: f.program, kvlabPid: f.kvlab_pid };
    if (child === undefined) {
      out.push({ ...found, action: "unchecked" });
      continue;
    }
    if (child) {
      await stopGroup(f.pid, f.start);
      out.push({ ...found, action: "stopped" });
    }
    try {
      Deno.removeSync(path);
    } catch { /* removed by another runner */ }
  }
  return out;
}

/** SIGTERM to a group, then SIGKILL when it still runs 2 s later. */
async function stopGroup(pid: number, start: string | null): Promise<void> {
  killGroup(pid, "SIGTERM");
  for (let i = 0; i < 20; i++) {
    if (!sameProcess(pid, start)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  killGroup(pid, "SIGKILL");
}
