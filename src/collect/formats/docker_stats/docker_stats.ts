/**
 * Parser for `docker stats` output: the table (`docker stats --no-stream`, as pasted into posts,
 * with its columns or with spaces collapsed) and `--format '{{json .}}'` lines, also as the
 * streaming client prints them (each frame behind cursor codes). Pure.
 *
 * @module
 */

import { splitLines } from "../../../text/lines.ts";
import { parseBytes } from "../../../text/units.ts";

/** One container's line. */
export interface DockerStatsRow {
  containerId: string;
  name: string;
  cpuPercent: number | null;
  memUsageBytes: number | null;
  memLimitBytes: number | null;
  memPercent: number | null;
  netInputBytes: number | null;
  netOutputBytes: number | null;
  blockInputBytes: number | null;
  blockOutputBytes: number | null;
  pids: number | null;
  /** Line of the text. */
  line: number;
}

const ROW =
  /^([0-9a-f]{6,64})\s+(\S+)\s+([\d.]+|--)%\s+(\S+)\s*\/\s*(\S+)\s+([\d.]+|--)%\s+(\S+)\s*\/\s*(\S+)\s+(\S+)\s*\/\s*(\S+)\s+(\d+|--)\s*$/;

const pct = (s: string) => (s === "--" ? null : Number(s));

/** The escape sequences a terminal program writes (`ESC [ … letter`). */
const CURSOR_CODES = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, "g");

/**
 * A line without the cursor codes the streaming `docker stats` writes between frames.
 *
 * @param line A line of its output.
 * @returns The line without them.
 *
 * @example
 * ```ts
 * import { stripCursorCodes } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(stripCursorCodes('\x1b[J\x1b[H{"Name":"a"}'), '{"Name":"a"}');
 * ```
 */
export function stripCursorCodes(line: string): string {
  return line.replace(CURSOR_CODES, "");
}

/**
 * Parses `docker stats` output (table or JSON lines).
 *
 * @example
 * ```ts
 * import { parseDockerStats } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const rows = parseDockerStats(
 *   "CONTAINER ID   NAME        CPU %     MEM USAGE / LIMIT    MEM %     NET I/O        BLOCK I/O     PIDS\n" +
 *     "517aa55b283c   mem-redis   0.05%     10.68MiB / 11.7GiB   0.09%     116MB / 71MB   0B / 3.06MB   5\n",
 * );
 * assert.equal(rows[0].name, "mem-redis");
 * assert.equal(rows[0].memUsageBytes, Math.round(10.68 * 1024 ** 2));
 * assert.equal(rows[0].netInputBytes, 116e6);
 * assert.equal(rows[0].blockOutputBytes, 3.06e6);
 * ```
 */
export function parseDockerStats(text: string, firstLine = 1): DockerStatsRow[] {
  const rows: DockerStatsRow[] = [];
  for (const { text: raw, line } of splitLines(text, firstLine)) {
    const t = stripCursorCodes(raw).trim();
    if (t.startsWith("{")) {
      try {
        const j = JSON.parse(t) as Record<string, string>;
        const [mu, ml] = (j.MemUsage ?? "").split("/").map((x) => x.trim());
        const [ni, no] = (j.NetIO ?? "").split("/").map((x) => x.trim());
        const [bi, bo] = (j.BlockIO ?? "").split("/").map((x) => x.trim());
        rows.push({
          containerId: j.ID ?? j.Container ?? "",
          name: j.Name ?? "",
          cpuPercent: j.CPUPerc ? pct(j.CPUPerc.replace("%", "")) : null,
          memUsageBytes: mu ? parseBytes(mu) : null,
          memLimitBytes: ml ? parseBytes(ml) : null,
          memPercent: j.MemPerc ? pct(j.MemPerc.replace("%", "")) : null,
          netInputBytes: ni ? parseBytes(ni) : null,
          netOutputBytes: no ? parseBytes(no) : null,
          blockInputBytes: bi ? parseBytes(bi) : null,
          blockOutputBytes: bo ? parseBytes(bo) : null,
          pids: j.PIDs && j.PIDs !== "--" ? Number(j.PIDs) : null,
          line,
        });
      } catch { /* not a stats line */ }
      continue;
    }
    const m = ROW.exec(t);
    if (!m) continue;
    rows.push({
      containerId: m[1],
      name: m[2],
      cpuPercent: pct(m[3]),
      memUsageBytes: parseBytes(m[4]),
      memLimitBytes: parseBytes(m[5]),
      memPercent: pct(m[6]),
      netInputBytes: parseBytes(m[7]),
      netOutputBytes: parseBytes(m[8]),
      blockInputBytes: parseBytes(m[9]),
      blockOutputBytes: parseBytes(m[10]),
      pids: m[11] === "--" ? null : Number(m[11]),
      line,
    });
  }
  return rows;
}
