/**
 * `deno task report`: rebuilds the bundled study datasets, executes every notebook in
 * `notebooks/` headless with Jupyter (nbconvert) and the Deno kernel, and writes the executed
 * notebooks, HTML pages and figures under `out/`. A cell error fails the report, naming the
 * notebook, the cell and the error.
 *
 * Cells run through `src/report/_fenced_execute.py`, an nbconvert preprocessor, rather than
 * `nbconvert --execute` (nbclient): the Deno kernel can publish a cell's last outputs after the
 * cell's `idle` status, and nbclient drops those, so tables went missing at random. The
 * preprocessor follows every cell with a fence and keeps everything that arrives before it
 * (see that file). The kernels get `KVLAB_FIGURES=<out>/figures` and `KVLAB_OUT=<out>`.
 *
 * @module
 */

import { buildStudies } from "../collect/ingest/studies.ts";
import { limited } from "../collect/limits.ts";

/** What happened to one notebook. */
export interface NotebookRun {
  notebook: string;
  seconds: number;
  executed: string;
  html: string | null;
  /** Cells that raised, 1-based as Jupyter shows them. */
  errors: { cell: number; ename: string; evalue: string }[];
}

/** Options of {@link runReport}. */
export interface ReportOptions {
  /** @default {"<repo>/notebooks"} */
  notebooks?: string;
  /** @default {"<repo>/out"} */
  out?: string;
  /** Only these notebooks (names without .ipynb). */
  only?: string[];
  /** @default {"jupyter"} (or KVLAB_JUPYTER) */
  jupyter?: string;
  /**
   * More environment variables for the kernels (`KVLAB_DATA`, `KVLAB_BY`, …: point the
   * notebooks at another dataset).
   */
  env?: Record<string, string>;
  /** Per-cell timeout, seconds. @default {180} */
  cellTimeoutS?: number;
  /**
   * Notebooks executed at once, each in its own kernel. More than 1 is faster on a machine with
   * cores to spare, but notebooks with live parts then measure with each other's load beside
   * them. @default {1}
   */
  jobs?: number;
  onNotebook?: (r: NotebookRun) => void;
}

/** A notebook cell raised: names the notebook and cell. */
export class NotebookError extends Error {
  /** @param runs The notebooks that failed. */
  constructor(readonly runs: NotebookRun[]) {
    super(
      runs.flatMap((r) =>
        r.errors.map((e) => `${r.notebook}: cell ${e.cell} raised ${e.ename}: ${e.evalue}`)
      )
        .join("\n"),
    );
    this.name = "NotebookError";
  }
}

const REPO = new URL("../../", import.meta.url).pathname;
/** This folder, which holds `_fenced_execute.py`. */
const HERE = new URL(".", import.meta.url).pathname;

async function jupyterRun(
  jupyter: string,
  args: string[],
  env: Record<string, string>,
): Promise<string> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(jupyter, { args, env, stdout: "piped", stderr: "piped" }).output();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error(
        `${jupyter}: not found. Install Jupyter (sudo apt-get install -y jupyter-nbconvert python3-nbclient ` +
          `python3-ipykernel) and the Deno kernel (deno jupyter --install).`,
      );
    }
    throw e;
  }
  const err = new TextDecoder().decode(out.stderr);
  if (!out.success) {
    throw new Error(
      `jupyter ${args.slice(0, 3).join(" ")} failed: ${err.trim().split("\n").slice(-3).join(" ")}`,
    );
  }
  return err;
}

/**
 * Runs the report.
 *
 * @throws {NotebookError} When any cell of any notebook raised (all notebooks are still run).
 * @throws {RangeError} On `jobs` that is not a whole number from 1 to 64.
 * @throws {Deno.errors.NotFound} When `only` names a notebook that is not there (before any runs).
 */
export async function runReport(options: ReportOptions = {}): Promise<NotebookRun[]> {
  const jobs = limited("jobs", options.jobs ?? 1, {
    min: 1,
    max: 64,
    integer: true,
    unit: "notebooks",
  });
  const nbDir = options.notebooks ?? `${REPO}notebooks`;
  const out = options.out ?? `${REPO}out`;
  const jupyter = options.jupyter ?? Deno.env.get("KVLAB_JUPYTER") ?? "jupyter";
  const all = [...Deno.readDirSync(nbDir)]
    .filter((e) => e.isFile && e.name.endsWith(".ipynb") && !e.name.startsWith("_"))
    .map((e) => e.name.replace(/\.ipynb$/, ""))
    .sort();
  const missing = (options.only ?? []).filter((n) => !all.includes(n));
  if (missing.length > 0) {
    throw new Deno.errors.NotFound(
      `no notebook named ${missing.map((n) => JSON.stringify(n)).join(", ")} in ${nbDir} ` +
        `(there are: ${all.join(", ") || "none"})`,
    );
  }
  const names = all.filter((n) => !options.only || options.only.includes(n));
  await buildStudies(`${REPO}data/raw`, `${REPO}data/studies`);
  await Deno.mkdir(`${out}/notebooks`, { recursive: true });
  await Deno.mkdir(`${out}/html`, { recursive: true });
  const env = {
    ...options.env,
    KVLAB_FIGURES: `${out}/figures`,
    KVLAB_OUT: out,
    // src/report/_fenced_execute.py, the preprocessor that runs the cells
    PYTHONPATH: [HERE, Deno.env.get("PYTHONPATH")].filter(Boolean).join(":"),
  };
  const one = (name: string) => runNotebook(name, { jupyter, nbDir, out, env, options });
  const runs = await pool(names, jobs, one);
  const failed = runs.filter((r) => r.errors.length > 0);
  if (failed.length > 0) throw new NotebookError(failed);
  return runs;
}

/** Where {@link runNotebook} finds Jupyter and the notebook, and puts the results. */
interface NotebookJob {
  jupyter: string;
  nbDir: string;
  out: string;
  env: Record<string, string>;
  options: ReportOptions;
}

/** Executes one notebook and exports its HTML page. */
async function runNotebook(
  name: string,
  { jupyter, nbDir, out, env, options }: NotebookJob,
): Promise<NotebookRun> {
  const t0 = performance.now();
  await jupyterRun(jupyter, [
    "nbconvert",
    "--to",
    "notebook",
    "--Exporter.preprocessors=_fenced_execute.FencedExecutePreprocessor",
    "--FencedExecutePreprocessor.kernel_name=deno",
    `--FencedExecutePreprocessor.timeout=${options.cellTimeoutS ?? 180}`,
    "--output-dir",
    `${out}/notebooks`,
    `${nbDir}/${name}.ipynb`,
  ], env);
  const executed = `${out}/notebooks/${name}.ipynb`;
  const nb = JSON.parse(await Deno.readTextFile(executed)) as {
    cells: {
      cell_type: string;
      outputs?: { output_type: string; ename?: string; evalue?: string }[];
    }[];
  };
  const errors: NotebookRun["errors"] = [];
  nb.cells.forEach((c, i) => {
    for (const o of c.outputs ?? []) {
      if (o.output_type === "error") {
        errors.push({ cell: i + 1, ename: o.ename ?? "Error", evalue: o.evalue ?? "" });
      }
    }
  });
  let html: string | null = null;
  try {
    await jupyterRun(jupyter, [
      "nbconvert",
      "--to",
      "html",
      "--output-dir",
      `${out}/html`,
      executed,
    ], env);
    html = `${out}/html/${name}.html`;
  } catch { /* HTML export is a convenience; the executed notebook is the record */ }
  const run = {
    notebook: `${name}.ipynb`,
    seconds: (performance.now() - t0) / 1000,
    executed,
    html,
    errors,
  };
  options.onNotebook?.(run);
  return run;
}

/**
 * Maps `items` through `f`, at most `jobs` at a time; results in the order of `items`. After a
 * failure no new item starts, the running ones finish, then the first error is thrown.
 */
async function pool<T, R>(items: T[], jobs: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (next < items.length && failure === null) {
      const i = next++;
      try {
        results[i] = await f(items[i]);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
  if (failure !== null) throw (failure as { error: unknown }).error;
  return results;
}
