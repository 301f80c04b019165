/**
 * Playwright's recordVideo runs its own ffmpeg build from `<PLAYWRIGHT_BROWSERS_PATH or ~/.cache/ms-playwright>/
 * ffmpeg-<rev>/ffmpeg-linux`, which cannot be downloaded here. Debian's /usr/bin/ffmpeg works in its place: this links
 * it there, idempotently, never downloading anything. The exact path is asked from playwright-core's own registry
 * (so it follows the installed version's revision and the PLAYWRIGHT_BROWSERS_PATH seen when it was loaded).
 */
import { existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

export interface FfmpegLinkResult {
  ok: boolean;
  path?: string;
  reason?: string;
}

export function playwrightFfmpegPath(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const core = require('playwright-core/lib/coreBundle') as {
      registry?: { registry?: { findExecutable(name: string): { executablePath(): string | undefined } | undefined } };
    };
    return core.registry?.registry?.findExecutable('ffmpeg')?.executablePath() ?? undefined;
  } catch {
    return undefined;
  }
}

/** Ensures Playwright finds an ffmpeg. Returns ok:false (video disabled) rather than throwing. */
export function ensureFfmpegLink(systemFfmpeg = '/usr/bin/ffmpeg', target = playwrightFfmpegPath()): FfmpegLinkResult {
  if (!target) return { ok: false, reason: 'cannot locate where playwright-core looks for ffmpeg' };
  if (existsSync(target)) return { ok: true, path: target };
  if (!existsSync(systemFfmpeg)) return { ok: false, reason: `${systemFfmpeg} is missing (apt install ffmpeg)` };
  try {
    mkdirSync(dirname(target), { recursive: true });
    try {
      // A dangling link left by an earlier install: replace it.
      if (lstatSync(target).isSymbolicLink() && readlinkSync(target) !== systemFfmpeg) unlinkSync(target);
    } catch {
      /* nothing there */
    }
    symlinkSync(systemFfmpeg, target);
    return { ok: true, path: target };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return { ok: true, path: target };
    return { ok: false, reason: `cannot link ffmpeg at ${target}: ${(e as NodeJS.ErrnoException).code ?? 'error'}` };
  }
}
