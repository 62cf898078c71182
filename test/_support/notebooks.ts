/**
 * Test support: what an executed notebook shows (captions, notes, charts, tables, returned
 * values), read from its JSON.
 *
 * @module
 */

/** A cell of an executed notebook. */
export type Cell = {
  cell_type: string;
  source: string[];
  outputs?: { output_type: string; data?: Record<string, string[] | string>; text?: string[] }[];
  execution_count?: number | null;
};

/**
 * What a notebook displayed, in order: each table's caption, `<note>` for each note and
 * `<chart>` for each chart.
 */
export function shown(path: string): string[] {
  const nb = JSON.parse(Deno.readTextFileSync(path)) as { cells: Cell[] };
  return nb.cells.flatMap((c) =>
    (c.outputs ?? []).flatMap((o) => {
      const raw = o.data?.["text/markdown"];
      const md = Array.isArray(raw) ? raw.join("") : raw;
      if (md) return [md.startsWith(">") ? "<note>" : /^\*\*(.+?)\*\*/.exec(md)?.[1] ?? ""];
      return o.data?.["application/vnd.vegalite.v5+json"] ? ["<chart>"] : [];
    })
  );
}

/** The Markdown tables a notebook displayed, by caption: rows of cells. */
export function tables(path: string): Map<string, string[][]> {
  const nb = JSON.parse(Deno.readTextFileSync(path)) as { cells: Cell[] };
  const out = new Map<string, string[][]>();
  for (const c of nb.cells) {
    for (const o of c.outputs ?? []) {
      const md = o.data?.["text/markdown"];
      if (!md) continue;
      const text = Array.isArray(md) ? md.join("") : md;
      const caption = /^\*\*(.+?)\*\*/.exec(text)?.[1] ?? "";
      const rows = text.split("\n").filter((l) => l.startsWith("|")).map((l) =>
        l.slice(1, -1).split("|").map((x) => x.trim())
      );
      out.set(caption, rows);
    }
  }
  return out;
}

/** The notes (Markdown block quotes) a notebook displayed. */
export function notesOf(path: string): string[] {
  const nb = JSON.parse(Deno.readTextFileSync(path)) as { cells: Cell[] };
  return nb.cells.flatMap((c) =>
    (c.outputs ?? []).flatMap((o) => {
      const raw = o.data?.["text/markdown"];
      const md = Array.isArray(raw) ? raw.join("") : raw ?? "";
      return md.startsWith(">") ? [md] : [];
    })
  );
}

/** The values cells returned (`execute_result` outputs), as `cell n: text`. */
export function executeResults(path: string): string[] {
  const nb = JSON.parse(Deno.readTextFileSync(path)) as { cells: Cell[] };
  return nb.cells.flatMap((c, i) =>
    (c.outputs ?? []).filter((o) => o.output_type === "execute_result").map((o) => {
      const t = o.data?.["text/plain"] ?? "";
      return `cell ${i + 1}: ${Array.isArray(t) ? t.join("") : t}`;
    })
  );
}
