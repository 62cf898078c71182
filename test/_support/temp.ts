/**
 * Test support: temporary folders that a test owns and that are removed after it, passed or
 * failed.
 *
 * @module
 */

/**
 * Runs `fn` with a fresh temporary folder, removed afterwards (with everything in it).
 *
 * @param prefix The folder name's prefix (`kvlab-<test>-`), to tell leftovers apart.
 * @param fn What to do in it.
 * @returns What `fn` returns.
 */
export async function withTempDir<T>(
  prefix: string,
  fn: (dir: string) => Promise<T> | T,
): Promise<T> {
  const dir = Deno.makeTempDirSync({ prefix });
  try {
    return await fn(dir);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
