/**
 * The bundled studies: raw outputs transcribed from the seed posts in `data/raw/<study>/`, each
 * folder with a `SOURCE.md` (for people) and an `ingest.json` (for kvlab: which server,
 * version and label each file is). `buildStudies` rebuilds `data/studies/<study>/` from scratch,
 * so the datasets are reproducible from what is committed.
 *
 * @module
 */

import { ParseError } from "../errors.ts";
import { ingestFile } from "./ingest.ts";

/** One file of a study's ingest.json. */
export interface StudyFile {
  file: string;
  server: string;
  server_version?: string;
  label?: string;
  tags?: Record<string, string>;
}

/** What {@link buildStudies} made. */
export interface BuiltStudy {
  study: string;
  data: string;
  runs: number;
  tests: number;
}

/**
 * Rebuilds every study that has an `ingest.json` under `rawDir` into `outDir/<study>/`.
 *
 * @throws {ParseError} For an ingest.json that is not a list of {file, server, …}, or a file
 * that does not ingest.
 */
export async function buildStudies(rawDir: string, outDir: string): Promise<BuiltStudy[]> {
  const studies = [...Deno.readDirSync(rawDir)].filter((e) => e.isDirectory).map((e) => e.name)
    .sort();
  const built: BuiltStudy[] = [];
  for (const study of studies) {
    const manifest = `${rawDir}/${study}/ingest.json`;
    let files: StudyFile[];
    try {
      files = JSON.parse(Deno.readTextFileSync(manifest));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      throw new ParseError(
        `expected a JSON list of { file, server, server_version, label }: ${(e as Error).message}`,
        {
          file: manifest,
          line: 1,
          column: 1,
          text: "",
        },
      );
    }
    if (
      !Array.isArray(files) ||
      files.some((f) => typeof f?.file !== "string" || typeof f?.server !== "string")
    ) {
      throw new ParseError("expected a JSON list of { file, server, server_version, label }", {
        file: manifest,
        line: 1,
        column: 1,
        text: "",
      });
    }
    const data = `${outDir}/${study}`;
    await Deno.remove(data, { recursive: true }).catch(() => {});
    let runs = 0;
    let tests = 0;
    for (const f of files) {
      const o = await ingestFile(`${rawDir}/${study}/${f.file}`, {
        data,
        server: f.server,
        serverVersion: f.server_version,
        label: f.label,
        tags: { study, ...(f.tags ?? {}) },
      });
      if (o.status !== "ingested") throw o.error ?? new Error(`${f.file}: ${o.status}`);
      runs += o.runs.length;
      tests += o.runs.reduce((n, r) => n + r.tests, 0);
    }
    built.push({ study, data, runs, tests });
  }
  return built;
}
