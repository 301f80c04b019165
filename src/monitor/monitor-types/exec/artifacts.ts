/**
 * Artifact files of one run inside ctx.artifactDir (names relative to it in details.artifacts), the keep/delete
 * policy, the HAR scrub, and `resolveArtifactPath` for the download endpoint.
 */
import { chmod, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { SecretMasker } from './templates.js';
import { scrubHarText } from './har-scrub.js';

export const ARTIFACT_POLICIES = ['always', 'on-failure', 'never'] as const;
export type ArtifactPolicy = (typeof ARTIFACT_POLICIES)[number];

export interface ArtifactInfo {
  /** File name relative to the run's artifact dir. */
  file: string;
  kind: 'screenshot' | 'video' | 'har';
  bytes: number;
  /** Step index, for screenshots. */
  step?: number;
}

/**
 * Resolves `relativePath` inside `root`; returns undefined for anything that would leave it (absolute paths, `..`,
 * NUL bytes, backslashes). Symlinks are not followed here: the type never creates any inside an artifact dir.
 */
export function resolveArtifactPath(root: string, relativePath: string): string | undefined {
  if (!relativePath || relativePath.includes('\0') || relativePath.includes('\\') || isAbsolute(relativePath))
    return undefined;
  const base = resolve(root);
  const full = resolve(base, relativePath);
  const rel = relative(base, full);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.split(sep).includes('..')) return undefined;
  return full;
}

/** `step-03-log-in.png` from index 2 and name "Log in". */
export function screenshotName(index: number, stepName: string, suffix = ''): string {
  const slug =
    stepName
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'step';
  return `step-${String(index + 1).padStart(2, '0')}-${slug}${suffix}.png`;
}

export class ArtifactSet {
  private readonly items: ArtifactInfo[] = [];
  private bytes = 0;
  /** Files deleted because they would have passed the run's byte cap (setting artifactMaxBytesPerRun). */
  readonly overCap: string[] = [];

  constructor(
    readonly dir: string | undefined,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {}

  async ensureDir(): Promise<string | undefined> {
    if (!this.dir) return undefined;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    return this.dir;
  }

  path(file: string): string | undefined {
    return this.dir ? join(this.dir, file) : undefined;
  }

  async add(file: string, kind: ArtifactInfo['kind'], step?: number): Promise<void> {
    const p = this.path(file);
    if (!p) return;
    const st = await stat(p).catch(() => undefined);
    // Screenshots, videos and HARs are written by the browser driver: make each private as it is registered.
    if (st) await chmod(p, 0o600).catch(() => undefined);
    if (!st || st.size === 0) return;
    if (this.bytes + st.size > this.maxBytes) {
      await rm(p, { force: true }).catch(() => undefined);
      this.overCap.push(file);
      return;
    }
    this.bytes += st.size;
    this.items.push({ file, kind, bytes: st.size, ...(step === undefined ? {} : { step }) });
  }

  /** Moves Playwright's randomly named video into `video.webm` and removes its temp folder. */
  async adoptVideo(videoPath: string | undefined, tmpDir: string | undefined): Promise<void> {
    const target = this.path('video.webm');
    if (videoPath && target) {
      await rename(videoPath, target).catch(() => undefined);
      await this.add('video.webm', 'video');
    }
    if (tmpDir) await rm(tmpDir, { recursive: true, force: true }).catch(() => undefined);
  }

  /** Redacts the session headers and cookies (har-scrub.ts: `redactHeaders` names them) and replaces every resolved
   * secret (and its URL/JSON-encoded forms) in the HAR, e.g. a posted password. A file that is not a HAR is deleted. */
  async scrubHar(file: string, masker: SecretMasker, redactHeaders: Set<string>): Promise<void> {
    const p = this.path(file);
    if (!p) return;
    const text = await readFile(p, 'utf8').catch(() => undefined);
    if (text === undefined) return;
    const scrubbed = scrubHarText(text, redactHeaders);
    if (scrubbed === undefined) {
      await rm(p, { force: true }).catch(() => undefined);
      return;
    }
    await writeFile(p, masker.size > 0 ? masker.mask(scrubbed) : scrubbed);
    await this.add(file, 'har');
  }

  /** Drops everything but the explicit screenshot steps when the policy says so; returns what is kept. */
  async finish(policy: ArtifactPolicy, failed: boolean, onDemand: Set<string>): Promise<ArtifactInfo[]> {
    const keepAll = policy === 'always' || (policy === 'on-failure' && failed);
    const kept: ArtifactInfo[] = [];
    for (const a of this.items) {
      if (keepAll || (policy !== 'never' && onDemand.has(a.file))) kept.push(a);
      else if (this.dir) await rm(join(this.dir, a.file), { force: true }).catch(() => undefined);
    }
    if (this.dir && kept.length === 0) {
      const left = await readdir(this.dir).catch(() => ['?']);
      if (left.length === 0) await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
    }
    return kept;
  }
}
