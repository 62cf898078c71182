/**
 * Docker: the engine kvlab talks to (`DOCKER_HOST`, the default socket, or a private `dockerd`
 * it starts and stops by PID), local server images made from the installed binaries without a
 * registry, server containers on the host's network, `docker stats` samples, and the watch of a
 * server's container over every run of a plan (its stats, facts and an OOM kill).
 *
 * @module
 */

export * from "./engine.ts";
export * from "./private_engine.ts";
export * from "./image.ts";
export * from "./container.ts";
export * from "./stats.ts";
export * from "./watch.ts";
