/**
 * The project's shared material beside the clone (`../shared/`: the corpus of real outputs,
 * other people's published files among them). Tests read it there and never copy it into this
 * repository; without it a test says in one line what it skipped, and under `CI=true` fails.
 *
 * @module
 */

/** The `../shared/` folder beside this clone. */
export const SHARED = new URL("../../../shared/", import.meta.url).pathname;

/**
 * A file of `../shared/`, or null (with one line saying what is skipped) when it is not there.
 *
 * @param path Its path under `../shared/`.
 * @param what What the test reads it for, in the skip line.
 * @returns Its text, or null.
 * @throws {Error} Under `CI=true`, when the file is missing.
 */
export function requireShared(path: string, what: string): string | null {
  try {
    return Deno.readTextFileSync(SHARED + path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    const why = `${what}: ${SHARED}${path} is not there (the shared corpus beside the clone)`;
    if (Deno.env.get("CI") === "true") throw new Error(why);
    // deno-lint-ignore no-console -- one line saying what was skipped and why
    console.log(`skipped: ${why}`);
    return null;
  }
}
