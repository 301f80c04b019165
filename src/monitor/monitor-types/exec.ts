/**
 * Web UI (exec) monitors: multi-step browser transactions (docs/exec-monitors.md). The composition root builds the
 * type with `createExecType({ log, poolOptions })` and calls `close()` at shutdown; the browser pool inside is
 * created with it and launches nothing until the first check. `execType` / `closeBrowsers()` are a lazily built
 * default for registries that import a type object directly.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isAppError } from '../../core/errors.js';
import type { CheckContext, CheckResult, MonitorConfig, MonitorType, SecretUse } from './types.js';
import { stepSecretRefs } from './exec/secret-refs.js';
import { ArtifactSet } from './exec/artifacts.js';
import { BrowserPool, type BrowserPoolOptions, type Lease } from './exec/browser-pool.js';
import { execFields, parseExecConfig, type ExecOptions } from './exec/config.js';
import { ensureFfmpegLink } from './exec/ffmpeg-link.js';
import type { LaunchedBrowser, Session } from './exec/session.js';
import { runSteps, type RunOutput } from './exec/step-runner.js';
import { createFence } from './exec/fence.js';
import { redactedHeaderSet } from './exec/har-scrub.js';
import { createRegexRunner, type RegexRunner } from './lib/safe-regex.js';
import { SecretMasker, TemplateError, type TemplateSources } from './exec/templates.js';
import {
  createVaultClient,
  vaultConfigFrom,
  type VaultClient,
  type VaultClientOptions,
  type VaultConfig,
} from './exec/vault-client.js';

export { resolveArtifactPath } from './exec/artifacts.js';
export { BrowserPool } from './exec/browser-pool.js';
export type { BrowserPoolOptions } from './exec/browser-pool.js';

export interface ExecTypeOptions {
  log?: Logger;
  poolOptions?: BrowserPoolOptions;
  vault?: VaultClientOptions;
  /** The type's own cap for the runner's concurrency gate (default 2). */
  maxConcurrent?: number;
  /** Debian's ffmpeg, linked where playwright-core looks for its own (default /usr/bin/ffmpeg). */
  ffmpegPath?: string;
  /** Runs step patterns (assertText, assertUrl, waitFor) off the event loop; default: one of its own. */
  regex?: RegexRunner;
}

export interface ExecTypeHandle {
  type: MonitorType;
  pool: BrowserPool;
  vault: VaultClient;
  /** Resolves once no context close, browser close or spare preparation is under way (bench: between runs). */
  settled(): Promise<void>;
  /** Closes every browser. */
  close(): Promise<void>;
}

const HAR_FILE = 'network.har';
/** How long a context close may run on after its result was returned before the lease is released anyway. */
const CLOSE_BOUND_MS = 5_000;
/** A browser transaction of several page loads needs more than the 10 s every other type defaults to. */
const EXEC_DEFAULTS = { timeout: '60' } as const;

function exception(message: string, startMs: number, now: number): CheckResult {
  return { outcome: 'exception', responseTimeMs: now - startMs, message };
}

/** The check's timeout passed before the run had a browser or a context: down, as a slow step is. */
function timedOut(message: string, startMs: number, now: number): CheckResult {
  return { outcome: 'down', responseTimeMs: now - startMs, message };
}

/** Template sources of one run of monitor `monitor`: every reference is authorised against its scope for the origin
 * it is typed on before it is read (docs/security.md §1). */
function sources(ctx: CheckContext, monitor: string, vault: VaultClient, masker: SecretMasker): TemplateSources {
  let cfg: Promise<VaultConfig> | undefined;
  const allow = async (use: SecretUse) => {
    const refused = await ctx.secrets.authorize?.(monitor, use);
    if (refused) throw new TemplateError(refused);
  };
  return {
    secret: async (name, origin) => (await allow({ kind: 'secret', ref: name, origin }), ctx.secrets.get(name)),
    totp: async (name, origin) => {
      await allow({ kind: 'totp', ref: name, origin });
      const seed = await ctx.secrets.get(name);
      if (!seed) throw new TemplateError(`TOTP secret "${name}" is not in the secret store`);
      const { totpFromSeed } = await import('./exec/totp.js'); // otpauth loads at the first TOTP, not at start
      return totpFromSeed(seed, ctx.now());
    },
    vault: async (path, key, origin) => {
      await allow({ kind: 'vault', ref: `${path}#${key}`, origin });
      cfg ??= vaultConfigFrom(ctx.settings, ctx.secrets).then((c) => (masker.add(c.token), c));
      return vault.read(await cfg, path, key, ctx.signal);
    },
  };
}

function buildResult(
  opts: ExecOptions,
  out: RunOutput,
  startMs: number,
  endMs: number,
  extra: Record<string, unknown>,
): CheckResult {
  const navs = out.navigations;
  const passed = out.steps.filter((s) => s.status === 'passed').length;
  const metrics: Record<string, number> = {
    totalMs: endMs - startMs,
    steps: out.steps.length,
    stepsPassed: passed,
    navigations: navs.length,
  };
  const first = navs[0];
  const last = navs[navs.length - 1];
  if (first?.ttfbMs !== undefined) metrics.firstTtfbMs = first.ttfbMs;
  if (first?.loadMs !== undefined) metrics.firstLoadMs = first.loadMs;
  const lcps = navs.map((n) => n.lcpMs).filter((v): v is number => v !== undefined);
  if (lcps.length) metrics.maxLcpMs = Math.max(...lcps);
  if (last?.loadMs !== undefined) metrics.lastLoadMs = last.loadMs;
  return {
    outcome: out.failure ? out.failure.outcome : 'up',
    responseTimeMs: endMs - startMs,
    message: out.failure ? out.failure.message : `${passed} steps passed`,
    metrics,
    details: {
      browser: opts.browser,
      steps: out.steps,
      navigations: navs,
      ...(out.navigationsDropped ? { navigationsDropped: out.navigationsDropped } : {}),
      extracted: out.extracted,
      ...(out.failure ? { failedStep: out.failure.index } : {}),
      ...extra,
    },
  };
}

/**
 * Waits for `p` unless the signal aborts first (→ undefined) or `gone` reports the browser gone (→ rejects); a value
 * that arrives late is disposed of. Playwright can leave a context's creation pending forever when the browser is
 * killed meanwhile (seen under load in exec.test.ts's crash test): a run must never wait on it past either.
 */
function settleUnless<T>(
  p: Promise<T>,
  signal: AbortSignal,
  dispose: (late: T) => unknown,
  gone?: LaunchedBrowser,
): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    let done = false;
    let off: (() => void) | undefined;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      off?.();
      settle();
    };
    const onAbort = () => finish(() => resolve(undefined));
    const onGone = () => finish(() => reject(new Error('the browser crashed or disconnected')));
    p.then(
      (v) => (done ? void Promise.resolve(dispose(v)).catch(() => undefined) : finish(() => resolve(v))),
      (e: unknown) => finish(() => reject(e)),
    );
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    if (gone) {
      off = gone.onDisconnected(onGone);
      if (!gone.isConnected()) onGone();
    }
  });
}

export function createExecType(options: ExecTypeOptions = {}): ExecTypeHandle {
  const pool = new BrowserPool({ log: options.log, ...options.poolOptions });
  /** Context closes (and lease releases) still running after their check returned. */
  const background = new Set<Promise<void>>();
  const vault = createVaultClient(options.vault);
  const regex = options.regex ?? createRegexRunner();
  let ffmpeg: ReturnType<typeof ensureFfmpegLink> | undefined;

  /** Runs the transaction; `closing`, when set, is the context's close still under way after the result. */
  async function runWith(
    opts: ExecOptions,
    ctx: CheckContext,
    lease: Lease,
    startMs: number,
    monitor: string,
  ): Promise<{ result: CheckResult; closing?: Promise<void> }> {
    const masker = new SecretMasker();
    const artifacts = new ArtifactSet(
      opts.artifacts === 'never' ? undefined : ctx.artifactDir,
      Number(ctx.settings.get('artifactMaxBytesPerRun') || Number.POSITIVE_INFINITY),
    );
    let dir: string | undefined;
    try {
      dir = await artifacts.ensureDir();
    } catch (e) {
      return {
        result: exception(
          `cannot create the artifact folder: ${(e as NodeJS.ErrnoException).code ?? 'error'}`,
          startMs,
          ctx.now(),
        ),
      };
    }
    const unsupported: string[] = [];
    const b = lease.browser;
    if (opts.video && !b.supports.video) unsupported.push('video');
    if (opts.har && !b.supports.har) unsupported.push('har');
    let videoDir: string | undefined;
    if (dir && opts.video && b.supports.video) {
      ffmpeg ??= ensureFfmpegLink(options.ffmpegPath);
      if (ffmpeg.ok) videoDir = join(dir, `.video-${randomUUID()}`);
      else unsupported.push(`video (${ffmpeg.reason})`);
    }
    const harPath = dir && opts.har && b.supports.har ? join(dir, HAR_FILE) : undefined;
    let session: Session;
    const fenced = createFence(ctx.policy);
    try {
      const opened = b.newSession({
        viewport: opts.viewport,
        device: opts.device,
        ignoreTlsErrors: opts.ignoreTlsErrors,
        recordVideoDir: videoDir,
        recordHarPath: harPath,
        fence: fenced.fence,
      });
      const s = await settleUnless(opened, ctx.signal, (late) => late.close(), b);
      if (!s) return { result: timedOut('transaction timed out while opening a browser context', startMs, ctx.now()) };
      session = s;
    } catch (e) {
      return {
        result: exception(
          `cannot open a browser context: ${String((e as Error).message).split('\n')[0]}`,
          startMs,
          ctx.now(),
        ),
      };
    }
    const onAbort = () => void session.close();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const reserveMs = Math.min(2_000, Math.max(100, ctx.timeoutMs * 0.1));
    const t0 = ctx.now();
    let out: RunOutput;
    try {
      out = await runSteps({
        steps: opts.steps,
        session,
        browserConnected: () => b.isConnected(),
        sources: sources(ctx, monitor, vault, masker),
        masker,
        artifacts,
        screenshots: dir !== undefined,
        deadlineMs: ctx.deadlineMs - reserveMs,
        now: ctx.now,
        signal: ctx.signal,
        regex,
      });
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
    const t1 = ctx.now();
    let closing: Promise<void> | undefined;
    if (videoDir || harPath) {
      // The video and the HAR are only complete once the context is closed.
      const closed = await session.close();
      await artifacts.adoptVideo(closed.videoPath, videoDir);
      if (harPath) await artifacts.scrubHar(HAR_FILE, masker, redactedHeaderSet(ctx.settings.get('harRedactHeaders')));
    } else {
      // Nothing to collect from the close: it finishes after the result is returned, bounded; the lease is held until then.
      closing = Promise.race([
        session.close().then(
          () => undefined,
          () => undefined,
        ),
        sleep(CLOSE_BOUND_MS, undefined, { ref: false }),
      ]);
    }
    const kept = await artifacts.finish(opts.artifacts, out.failure !== undefined, out.onDemand);
    // Redacted by value as a whole: no resolved secret leaves the run in any string of the result.
    const result = masker.maskDeep(
      buildResult(opts, out, t0, t1, {
        artifacts: kept,
        ...(artifacts.overCap.length ? { artifactsOverCap: artifacts.overCap } : {}),
        ...(unsupported.length ? { unsupported } : {}),
      }),
    );
    const blocked = fenced.blocked();
    if (blocked) {
      // As for url/api checks, a target the network policy denies is a configuration fault, not an outage.
      result.details = { ...result.details, blockedByPolicy: blocked };
      if (result.outcome !== 'up')
        return { result: { ...result, outcome: 'exception', message: `network policy denied ${blocked}` }, closing };
    }
    return { result, closing };
  }

  async function check(config: MonitorConfig, ctx: CheckContext): Promise<CheckResult> {
    const startMs = ctx.now();
    let opts: ExecOptions;
    try {
      opts = parseExecConfig(config);
    } catch (e) {
      if (isAppError(e)) return exception(`invalid configuration: ${e.message}`, startMs, ctx.now());
      throw e;
    }
    let lease: Lease | undefined;
    try {
      lease = await settleUnless(pool.acquire(opts.browser, opts.ignoreTlsErrors), ctx.signal, (late) =>
        late.release(),
      );
    } catch (e) {
      return exception(String((e as Error).message), startMs, ctx.now());
    }
    if (!lease) return timedOut('transaction timed out while the browser was starting', startMs, ctx.now());
    let closing: Promise<void> | undefined;
    try {
      const run = await runWith(opts, ctx, lease, startMs, config.name);
      closing = run.closing;
      return run.result;
    } catch (e) {
      // A crashed browser or a closed context must never take the service down.
      if (!lease.browser.isConnected()) return exception('the browser crashed or disconnected', startMs, ctx.now());
      throw e;
    } finally {
      if (closing) {
        const l = lease;
        const done = closing.then(() => l.release()).catch(() => undefined);
        background.add(done);
        void done.finally(() => background.delete(done));
      } else await lease.release();
    }
  }

  const type: MonitorType = {
    id: 'exec',
    fields: execFields,
    required: ['steps'],
    secretFields: [],
    defaults: EXEC_DEFAULTS,
    maxConcurrent: options.maxConcurrent ?? 2,
    validate: (config) => void parseExecConfig(config),
    secretRefs: (config) => stepSecretRefs(parseExecConfig(config).steps),
    check,
  };
  const settled = async () => {
    await Promise.all(background);
    await pool.settled();
  };
  return {
    type,
    pool,
    vault,
    settled,
    close: async () => {
      await Promise.all(background);
      await pool.close();
      if (!options.regex) await regex.close();
    },
  };
}
