/**
 * A server's own tool parameters (`params: { pipeline: 16 }`, issue 36) applied to its cells:
 * arms that differ by a parameter against one server. Private to the plan kinds.
 *
 * @module
 */

import type { PlanCellBase } from "../kind.ts";

/** The cell field of each parameter name a plan's `params:` may use. */
const FIELDS: Record<string, string> = {
  clients: "clients",
  threads: "threads",
  pipeline: "pipeline",
  data_size_bytes: "dataSizeBytes",
  keyspace: "keyspace",
};

/**
 * The cells with each server's own parameters in place of the matrix's, their ids naming the
 * values they run.
 *
 * @param plan The plan's name.
 * @param cells The interleaved cells.
 * @param key The id part of a cell's parameters.
 * @returns The cells.
 */
export function withServerParams<C extends PlanCellBase>(
  plan: { name: string },
  cells: C[],
  key: (cell: C) => string,
): C[] {
  return cells.map((cell) => {
    const own = cell.server.params;
    if (!own) return cell;
    const changed = { ...cell } as Record<string, unknown>;
    for (const [k, v] of Object.entries(own)) changed[FIELDS[k] ?? k] = v;
    const c = changed as C;
    return { ...c, id: `${plan.name}/${cell.server.name}/${key(c)}/rep${cell.repetition}` };
  });
}
