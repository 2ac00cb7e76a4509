/**
 * A cheap "may anything have changed?" for re-resolution: a synchronous stat of the few watched files
 * (Cargo files, `config.toml`), plus file-system watches (inotify, FSEvents, ReadDirectoryChangesW
 * through `Deno.watchFs`) on their folders and the plugins folder, so that an `execute` walks the plugin
 * tree only after an event instead of every time. When a watch cannot be set up (a folder missing, the
 * watch limit reached) or fails later, every look is exact again.
 *
 * @module
 */
import { filesFingerprintSync, fingerprintOf, MissingFiles, watchedFiles } from "./_fingerprint.ts";
import type { LoadedResolution } from "./resolve.ts";

/** What to watch: folders whose direct entries matter, and folders watched with everything below. */
export interface WatchTargets {
  /** Folders watched without their subfolders (e.g. the workspace root for `Cargo.lock`). */
  flat: string[];
  /** Folders watched with all their subfolders (the plugins folder). */
  deep: string[];
}

/**
 * Longest time a look without `trustWatch` (the session's periodic look) relies on a working watch that
 * saw no event, in ms: past it, the files are looked at again (a safety net for an event the system
 * dropped). A request's own look always checks the watched files itself.
 */
export const WATCH_TRUSTED_MS = 60_000;

/**
 * Watches `targets` and says whether something may have changed since the last {@link settle}. Starts
 * out "changed", so the first look is always exact.
 */
export class ChangeWatch {
  readonly #watchers: Deno.FsWatcher[] = [];
  readonly #key: string;
  #dirty = true;
  #broken = false;
  #closed = false;

  /** @param targets Folders to watch; a missing one makes the watch unavailable (every look exact). */
  constructor(targets: WatchTargets) {
    this.#key = ChangeWatch.keyOf(targets);
    try {
      const flat = [...new Set(targets.flat)];
      const deep = [...new Set(targets.deep)];
      if (flat.length > 0) this.#listen(Deno.watchFs(flat, { recursive: false }));
      if (deep.length > 0) this.#listen(Deno.watchFs(deep, { recursive: true }));
    } catch {
      // A folder that does not exist yet, or no watch left: exact looks it is, until the targets change.
      this.#broken = true;
    }
  }

  /** A stable text for a set of targets, to tell whether a new resolution needs a new watch. */
  static keyOf(targets: WatchTargets): string {
    return JSON.stringify([[...new Set(targets.flat)].sort(), [...new Set(targets.deep)].sort()]);
  }

  /** The key of the targets this watch was made for. */
  get key(): string {
    return this.#key;
  }

  /** Whether a look at the files is needed: an event came, or the watch is not working. */
  get mayHaveChanged(): boolean {
    return this.#dirty || this.#broken || this.#closed;
  }

  /** Called right before an exact look: events from now on count for the next one. */
  settle(): void {
    this.#dirty = false;
  }

  /** Stops watching. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const watcher of this.#watchers) {
      try {
        watcher.close();
      } catch {
        // Already closed by a failure: nothing left to release.
      }
    }
  }

  #listen(watcher: Deno.FsWatcher): void {
    this.#watchers.push(watcher);
    (async () => {
      for await (const _event of watcher) this.#dirty = true;
    })().catch(() => {
      // The watch failed (e.g. its folder was removed): from now on every look is exact.
      this.#broken = true;
    }).finally(() => {
      if (!this.#closed) this.#broken = true;
    });
  }
}

/**
 * The catalog's change detection: the fingerprint of the last resolution (see `_fingerprint.ts`) and,
 * for looks that may trust it, a {@link ChangeWatch} on the folders that fingerprint covers.
 */
export class ChangeDetector {
  #fingerprint: string;
  /** The files' part at the last look that found nothing new, or whose news were accepted. */
  #files: string | undefined;
  #pendingFiles: string | undefined;
  #watch: ChangeWatch | undefined;
  #watchIsStale = true;
  /** When the last exact look started (ms since the epoch). */
  #exactAtMs = 0;
  /** The top folders' missing files a request's look need not stat again (see `MissingFiles`). */
  readonly #missing = new MissingFiles();

  /** @param fingerprint The fingerprint of the resolution in use. */
  constructor(fingerprint: string) {
    this.#fingerprint = fingerprint;
  }

  /**
   * The current fingerprint when it differs from the accepted one, else `undefined`.
   *
   * @param options.trustWatch Skip the walk of the plugin tree when the watched files are unchanged
   *   (checked synchronously) and the watch saw no event since the last look (a watch is set up on first
   *   use; without one, the look is exact). Without it (the periodic look), a watch that a request set up
   *   and that saw no event is trusted for {@link WATCH_TRUSTED_MS} after the last exact look, without a
   *   single stat; exact otherwise.
   * @param options.nowMs The current time, ms since the epoch. @default Date.now()
   */
  async look(
    loaded: LoadedResolution,
    cwd: string,
    options: { trustWatch: boolean; nowMs?: number },
  ): Promise<string | undefined> {
    const nowMs = options.nowMs ?? Date.now();
    // A watch a request set up is kept across re-resolutions, for the periodic looks too.
    if (this.#watchIsStale && (options.trustWatch || this.#watch !== undefined)) {
      await this.#rewatch(loaded, cwd);
    }
    if (
      !options.trustWatch && this.#files !== undefined && this.#watch && !this.#watch.mayHaveChanged &&
      nowMs - this.#exactAtMs < WATCH_TRUSTED_MS
    ) {
      // The periodic look of a session: the watch saw nothing since an exact look not long ago, so the
      // thousands of stats of a large workspace are not repeated every tick (idle CPU).
      return undefined;
    }
    const files = filesFingerprintSync(loaded, cwd, this.#missing);
    if (options.trustWatch && files === this.#files && this.#watch && !this.#watch.mayHaveChanged) {
      return undefined;
    }
    this.#watch?.settle();
    this.#exactAtMs = nowMs;
    const fingerprint = await fingerprintOf(loaded, cwd);
    if (fingerprint === this.#fingerprint) {
      this.#files = files;
      return undefined;
    }
    this.#pendingFiles = files;
    this.#files = undefined; // Until accepted, every look is exact (a failed re-resolution is retried).
    return fingerprint;
  }

  /**
   * Takes `fingerprint` as the state in use (after a re-resolution, whose folders may differ).
   *
   * @param sameFiles Whether the resolution watches the same files as before (then the files' part of the
   *   look that found `fingerprint` holds too).
   */
  accept(fingerprint: string, sameFiles: boolean): void {
    this.#fingerprint = fingerprint;
    this.#files = sameFiles ? this.#pendingFiles : undefined;
    this.#watchIsStale = true;
  }

  /** Stops watching. */
  close(): void {
    this.#watch?.close();
    this.#watch = undefined;
  }

  async #rewatch(loaded: LoadedResolution, cwd: string): Promise<void> {
    this.#watchIsStale = false;
    const targets = await watchTargets(loaded, cwd);
    if (targets && this.#watch?.key === ChangeWatch.keyOf(targets)) return;
    this.#watch?.close();
    this.#watch = targets ? new ChangeWatch(targets) : undefined;
  }
}

/**
 * The folders to watch for a resolution: those of its watched files (flat), the git copies' folder
 * (flat), the plugins folder and path registries (deep); `undefined` when one of them is missing (the
 * config folder), so that every look stays exact.
 */
async function watchTargets(loaded: LoadedResolution, cwd: string): Promise<WatchTargets | undefined> {
  const isFolder = (path: string) => Deno.stat(path).then((info) => info.isDirectory, () => false);
  const flat = [
    ...new Set(watchedFiles(loaded, cwd).map((file) => file.slice(0, file.lastIndexOf("/")) || "/")),
  ];
  const deep = [`${loaded.configDir}/plugins`, ...(loaded.sources?.watch.deep ?? [])];
  const extraFlat = loaded.sources?.watch.flat ?? [];
  const [flatExists, deepExist, extraExist] = await Promise.all([
    Promise.all(flat.map(isFolder)),
    Promise.all(deep.map(isFolder)),
    Promise.all(extraFlat.map(isFolder)),
  ]);
  // A missing plugins folder shows up, when it is made, among the config folder's entries, which are watched.
  if (flatExists.some((exists) => !exists)) return undefined;
  // A registry folder (or the copies' folder) missing now is not watched: the session's periodic full look
  // sees it appear (within WATCH_TRUSTED_MS once a request's watch is in use).
  return {
    flat: [...new Set([...flat, ...extraFlat.filter((_, i) => extraExist[i])])],
    deep: deep.filter((_, i) => deepExist[i]),
  };
}
