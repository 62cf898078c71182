/**
 * The bundled studies: raw outputs transcribed from the seed posts in `data/raw/<study>/`, each
 * folder with a `SOURCE.md` (for people) and an `ingest.json` (for kvlab: which server,
 * version and label each file is) — or, for a study whose raw files are not public, its
 * `published-tables.md` (cells of the post, read by `writePublishedSweep`). `buildStudies` rebuilds `data/studies/<study>/` from scratch,
 * so the datasets are reproducible from what is committed; each is built in a hidden folder
 * beside it and swapped in when complete.
 *
 * @module
 */

import { ParseError } from "../../errors.ts";
import { ingestFile } from "./ingest.ts";
import { writePublishedSweep } from "./published_sweep.ts";

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
 * Rebuilds every study that has an `ingest.json` under `rawDir` into `outDir/<study>/`. Each
 * dataset is built in a hidden folder beside it (`outDir/.<study>-<random>/`) and swapped in
 * when complete, so readers never see half a dataset and a failed build changes nothing.
 *
 * @param rawDir The folder of `<study>/` folders with raw outputs and an `ingest.json`.
 * @param outDir Where the datasets go (`data/studies/` for the bundled ones).
 * @returns One entry per study built, with its dataset folder and counts.
 * @throws {ParseError} For an ingest.json that is not a list of {file, server, …}.
 * @throws The ingest error of a file that does not ingest (the study's dataset is left as it
 * was).
 *
 * @example
 * ```ts
 * import { buildStudies } from "@kvlab/kvlab/collect";
 * import { Dataset } from "../../store/dataset.ts";
 * import assert from "node:assert/strict";
 * const out = Deno.makeTempDirSync();
 * const built = await buildStudies(new URL("../../../data/raw", import.meta.url).pathname, out);
 * const rdma = built.find((b) => b.study === "rdma-vs-tcp")!;
 * assert.deepEqual([rdma.data, rdma.runs, rdma.tests], [`${out}/rdma-vs-tcp`, 2, 12]);
 * // a build that fails keeps the dataset it would have replaced, and leaves nothing beside it
 * const bad = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${bad}/rdma-vs-tcp`);
 * Deno.writeTextFileSync(`${bad}/rdma-vs-tcp/ingest.json`, '[{"file": "gone", "server": "x"}]');
 * await assert.rejects(buildStudies(bad, out), Deno.errors.NotFound);
 * assert.equal(Dataset.open(`${out}/rdma-vs-tcp`).runFacts(["run_id"]).length, 2);
 * const left = [...Deno.readDirSync(out)].map((e) => e.name).sort();
 * assert.deepEqual(left, built.map((b) => b.study));
 * ```
 */
export async function buildStudies(rawDir: string, outDir: string): Promise<BuiltStudy[]> {
  const studies = [...Deno.readDirSync(rawDir)].filter((e) => e.isDirectory).map((e) => e.name)
    .sort();
  const built: BuiltStudy[] = [];
  for (const study of studies) {
    const manifest = `${rawDir}/${study}/ingest.json`;
    const published = `${rawDir}/${study}/published-tables.md`;
    let files: StudyFile[];
    try {
      files = JSON.parse(Deno.readTextFileSync(manifest));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        // a study whose raw data is not public: its published tables, transcribed
        if (!exists(published)) continue;
        files = [];
      } else {
        throw new ParseError(
          `expected a JSON list of { file, server, server_version, label }: ${
            (e as Error).message
          }`,
          {
            file: manifest,
            line: 1,
            column: 1,
            text: "",
          },
        );
      }
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
    // Built aside, then swapped in: a notebook (or a second report) reading the dataset never
    // sees it half-built, and a build that fails leaves the previous dataset as it was.
    const aside = `${outDir}/.${study}-${crypto.randomUUID().slice(0, 8)}`;
    await Deno.mkdir(aside, { recursive: true });
    let runs = 0;
    let tests = 0;
    try {
      if (files.length === 0) {
        const made = writePublishedSweep(Deno.readTextFileSync(published), aside, {
          sourcePath: `data/raw/${study}/published-tables.md`,
          tags: { study },
        });
        runs += made.runs;
        tests += made.tests;
      }
      for (const f of files) {
        const o = await ingestFile(`${rawDir}/${study}/${f.file}`, {
          data: aside,
          server: f.server,
          serverVersion: f.server_version,
          label: f.label,
          tags: { study, ...(f.tags ?? {}) },
        });
        if (o.status !== "ingested") throw o.error ?? new Error(`${f.file}: ${o.status}`);
        runs += o.runs.length;
        tests += o.runs.reduce((n, r) => n + r.tests, 0);
      }
    } catch (e) {
      await Deno.remove(aside, { recursive: true });
      throw e;
    }
    await Deno.remove(data, { recursive: true }).catch(() => {});
    await Deno.rename(aside, data);
    built.push({ study, data, runs, tests });
  }
  return built;
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
