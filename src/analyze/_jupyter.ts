/**
 * The Deno Jupyter kernel's API, when this code runs under it. Private to the analyze folder
 * (`export.ts` shows charts with it, `notebook.ts` tables and notes).
 *
 * @module
 */

/** What kvlab uses of `Deno.jupyter`. */
export interface JupyterApi {
  /** Sends a message on IOPub (`display_data` with a MIME bundle). */
  broadcast(type: string, content: unknown): Promise<void>;
  /** Shows a MIME bundle (`raw`: as given). */
  display(bundle: unknown, options: { raw: boolean }): Promise<void> | void;
}

/**
 * `Deno.jupyter` under `deno jupyter`, else undefined. Outside the kernel Deno defines the name
 * but reading it throws (`Deno.jupyter is only available in \`deno jupyter\` subcommand`), so
 * a plain `Deno.jupyter` check made every `show…` helper and `display` throw in scripts.
 *
 * @returns The kernel's API, or undefined outside Jupyter.
 *
 * @example
 * ```ts
 * import { jupyter } from "./_jupyter.ts";
 * import assert from "node:assert/strict";
 * assert.equal(jupyter(), undefined); // a test is no notebook
 * ```
 */
export function jupyter(): JupyterApi | undefined {
  try {
    return (Deno as unknown as { jupyter?: JupyterApi }).jupyter;
  } catch {
    return undefined;
  }
}
