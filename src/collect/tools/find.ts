/**
 * Finding the benchmark tools kvlab runs (memtier_benchmark, valkey-server, …): on `PATH`
 * first, then in the cache `.ci/install` builds them into
 * (`$KVLAB_TOOLS_DIR`, else `$XDG_CACHE_HOME/kvlab/tools`, else `~/.cache/kvlab/tools`), one
 * folder per `<name>-<version>/`. The path logic is pure ({@link toolCandidates}); only
 * {@link findTool} looks at the file system.
 *
 * @module
 */

import { isExecutableFile } from "../process.ts";

/** The environment variables the lookup reads. */
export interface ToolEnv {
  PATH?: string;
  HOME?: string;
  XDG_CACHE_HOME?: string;
  /** Overrides the tools cache folder. */
  KVLAB_TOOLS_DIR?: string;
}

/**
 * The folder `.ci/install` builds tools into, for an environment.
 *
 * @param env The environment variables.
 * @returns The folder, or `null` when neither an override nor a home folder is set.
 *
 * @example
 * ```ts
 * import { toolsDir } from "./find.ts";
 * import assert from "node:assert/strict";
 * assert.equal(toolsDir({ HOME: "/home/a" }), "/home/a/.cache/kvlab/tools");
 * assert.equal(toolsDir({ HOME: "/home/a", XDG_CACHE_HOME: "/c" }), "/c/kvlab/tools");
 * assert.equal(toolsDir({ HOME: "/home/a", KVLAB_TOOLS_DIR: "/t" }), "/t");
 * assert.equal(toolsDir({}), null);
 * ```
 */
export function toolsDir(env: ToolEnv): string | null {
  if (env.KVLAB_TOOLS_DIR) return env.KVLAB_TOOLS_DIR;
  if (env.XDG_CACHE_HOME) return `${env.XDG_CACHE_HOME}/kvlab/tools`;
  if (env.HOME) return `${env.HOME}/.cache/kvlab/tools`;
  return null;
}

/**
 * Where to look for a tool, in order: each `PATH` folder, then each cache folder, newest
 * version first (`valkey-8.1.0/` before `valkey-8.0.1/`); folders starting with `.` (builds in
 * progress) are skipped.
 *
 * @param name The executable's name (`memtier_benchmark`).
 * @param env The environment variables.
 * @param cacheEntries The names of the folders inside {@link toolsDir}.
 * @returns Candidate paths.
 * @throws {TypeError} For a name that is not a plain file name.
 *
 * @example
 * ```ts
 * import { toolCandidates } from "./find.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   toolCandidates("valkey-server", { PATH: "/usr/bin:", HOME: "/h" }, [
 *     "valkey-8.0.1", ".build-valkey-8.1.0.x1", "valkey-8.1.0", "memtier_benchmark-2.3.0",
 *   ]),
 *   [
 *     "/usr/bin/valkey-server",
 *     "/h/.cache/kvlab/tools/valkey-8.1.0/valkey-server",
 *     "/h/.cache/kvlab/tools/valkey-8.0.1/valkey-server",
 *     "/h/.cache/kvlab/tools/memtier_benchmark-2.3.0/valkey-server",
 *   ],
 * );
 * ```
 */
export function toolCandidates(
  name: string,
  env: ToolEnv,
  cacheEntries: readonly string[],
): string[] {
  if (name === "" || name.includes("/") || name === "." || name === "..") {
    throw new TypeError(`invalid tool name: ${JSON.stringify(name)}`);
  }
  const out: string[] = [];
  for (const dir of (env.PATH ?? "").split(":")) if (dir !== "") out.push(`${dir}/${name}`);
  const cache = toolsDir(env);
  if (cache === null) return out;
  const dirs = cacheEntries.filter((d) => !d.startsWith(".") && !d.includes("/"));
  dirs.sort(byVersionDescending);
  for (const d of dirs) out.push(`${cache}/${d}/${name}`);
  return out;
}

/** File-system probes of {@link findTool}, replaceable in tests. */
export interface FindToolOptions {
  /**
   * The environment.
   * @default {Deno.env.toObject()}
   */
  env?: ToolEnv;
  /**
   * Lists a folder's entries (an empty list for a missing folder).
   * @default {reads the folder with Deno.readDirSync}
   */
  listDir?: (dir: string) => string[];
  /**
   * Whether a path is an executable file.
   * @default {Deno.statSync: a file with an execute bit}
   */
  isExecutable?: (path: string) => boolean;
}

/**
 * Finds a tool on `PATH` or in kvlab's tools cache.
 *
 * @param name The executable's name (`memtier_benchmark`, `valkey-server`, …).
 * @param options Environment and file-system probes (tests pass fakes).
 * @returns The first executable found, or `null` when there is none.
 *
 * @example
 * ```ts
 * import { findTool } from "./find.ts";
 * import assert from "node:assert/strict";
 * const found = findTool("memtier_benchmark", {
 *   env: { PATH: "/usr/bin", HOME: "/h" },
 *   listDir: () => ["memtier_benchmark-2.3.0"],
 *   isExecutable: (p) => p === "/h/.cache/kvlab/tools/memtier_benchmark-2.3.0/memtier_benchmark",
 * });
 * assert.equal(found, "/h/.cache/kvlab/tools/memtier_benchmark-2.3.0/memtier_benchmark");
 * ```
 */
export function findTool(name: string, options: FindToolOptions = {}): string | null {
  const env = options.env ?? Deno.env.toObject();
  const listDir = options.listDir ?? readDirNames;
  const isExecutable = options.isExecutable ?? isExecutableFile;
  const cache = toolsDir(env);
  const entries = cache === null ? [] : listDir(cache);
  return toolCandidates(name, env, entries).find(isExecutable) ?? null;
}

function readDirNames(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].filter((e) => e.isDirectory).map((e) => e.name);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied) return [];
    throw e;
  }
}

/** Orders `name-1.10.0` before `name-1.9.2` (numeric parts compared as numbers). */
function byVersionDescending(a: string, b: string): number {
  const pa = a.split(/(\d+)/);
  const pb = b.split(/(\d+)/);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] === pb[i]) continue;
    const na = Number(pa[i]);
    const nb = Number(pb[i]);
    if (i % 2 === 1 && Number.isFinite(na) && Number.isFinite(nb)) return nb - na;
    return pa[i] < pb[i] ? 1 : -1;
  }
  return pb.length - pa.length;
}

/**
 * What to run for a tool a user named: the name itself when `PATH` finds it (so the stored
 * command reads as the user would type it), else the path in the tools cache, else the name
 * (running it then fails with `ToolNotFoundError`). A name with a `/` is a path: kept.
 *
 * @param name The tool's name or path.
 * @param options Environment and file checks (for tests).
 * @returns The argv[0] to run.
 *
 * @example
 * ```ts
 * import { toolCommand } from "./find.ts";
 * import assert from "node:assert/strict";
 * const isExecutable = (p: string) => p === "/cache/valkey-8.0.1/valkey-benchmark" || p === "/usr/bin/redis-benchmark";
 * const o = { env: { PATH: "/usr/bin", KVLAB_TOOLS_DIR: "/cache" }, listDir: () => ["valkey-8.0.1"], isExecutable };
 * assert.equal(toolCommand("redis-benchmark", o), "redis-benchmark");
 * assert.equal(toolCommand("valkey-benchmark", o), "/cache/valkey-8.0.1/valkey-benchmark");
 * assert.equal(toolCommand("./my-benchmark", o), "./my-benchmark");
 * ```
 */
export function toolCommand(name: string, options: FindToolOptions = {}): string {
  if (name.includes("/")) return name;
  const found = findTool(name, options);
  const path = (options.env ?? Deno.env.toObject()).PATH ?? "";
  if (found === null || path.split(":").some((d) => d !== "" && found === `${d}/${name}`)) {
    return name;
  }
  return found;
}
