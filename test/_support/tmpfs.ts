/**
 * A small tmpfs for the full-disk tests: whether this process may mount one, mounting it, and
 * filling it up to a few KiB.
 *
 * @module
 */
import assert from "node:assert/strict";

/** Whether this process may mount a tmpfs (root on Linux); under `CI=true` it must. */
export function canMount(): boolean {
  const can = Deno.build.os === "linux" && Deno.uid() === 0;
  if (!can) {
    const why = "the full-disk test mounts a small tmpfs, which needs root on Linux";
    if (Deno.env.get("CI") === "true") throw new Error(why);
    // deno-lint-ignore no-console
    console.log(`skipped: ${why}`);
  }
  return can;
}

/** Mounts a 1 MiB tmpfs at `mnt` (created); `umount` it afterwards. */
export function mountTmpfs(mnt: string): void {
  Deno.mkdirSync(mnt);
  const mount = new Deno.Command("mount", { args: ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt] })
    .outputSync();
  assert.ok(mount.success, new TextDecoder().decode(mount.stderr));
}

/** Unmounts the tmpfs at `mnt`. */
export function umount(mnt: string): void {
  new Deno.Command("umount", { args: [mnt] }).outputSync();
}

/** Fills the tmpfs at `mnt` (emptied first), then gives back `freeKiB` KiB. */
export function fill(mnt: string, freeKiB: number): void {
  for (const e of Deno.readDirSync(mnt)) Deno.removeSync(`${mnt}/${e.name}`, { recursive: true });
  const f = Deno.openSync(`${mnt}/fill`, { write: true, create: true });
  let size = 0;
  try {
    for (;;) size += f.writeSync(new Uint8Array(4096));
  } catch { /* full */ }
  f.truncateSync(Math.max(0, size - freeKiB * 1024));
  f.close();
}
