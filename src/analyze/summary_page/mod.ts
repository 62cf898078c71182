/**
 * A study's summary page (`kvlab summary`): Markdown and figures built from a dataset's frames,
 * section by section.
 *
 * @module
 */

export * from "./page.ts";
