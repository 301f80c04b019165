/**
 * One browser process per kind, launched lazily and reused across runs (each run gets its own fresh context from
 * the session layer). A browser is retired — new runs go to a fresh one, the old one closes when its last run
 * ends — after `maxRunsPerBrowser` runs, when its process tree's RSS passes `maxRssMb`, or at once when it crashes
 * or disconnects. Nothing here is module-level: the owner constructs a pool and closes it at shutdown.
 */
import type { Logger } from 'pino';
import { sandboxPlan } from './sandbox.js';
import { treeRssBytes } from './proc.js';
import type { BrowserKind, Driver, LaunchedBrowser } from './session.js';

// The browser libraries load at a pool's first launch of that kind, not at service start (playwright-core ≈ 80 MB
// resident and ≈ 1 s, puppeteer-core ≈ 30 MB: docs/benchmarks.md "start to listening and idle RSS").
const launchChromium: Driver = async (opts) => (await import('./playwright-driver.js')).launchChromium(opts);
const launchFirefox: Driver = async (opts) => (await import('./puppeteer-driver.js')).launchFirefox(opts);

export interface BrowserPoolOptions {
  chromiumPath?: string;
  firefoxPath?: string;
  /** Runs before a browser is replaced (default 200). 1 launches a fresh browser for every run (bench baseline). */
  maxRunsPerBrowser?: number;
  /** Replace a browser whose process tree passes this resident size after a run (default 1500 MB). */
  maxRssMb?: number;
  launchTimeoutMs?: number;
  /** Prepare the next run's fresh context while a run executes (chromium). Default true (one idle spare per browser, dropped after 2 min). */
  prewarm?: boolean;
  /** Replaceable launchers (tests). */
  drivers?: Partial<Record<BrowserKind, Driver>>;
  log?: Logger;
}

export interface Lease {
  readonly browser: LaunchedBrowser;
  release(): Promise<void>;
}

interface Entry {
  key: string;
  ready: Promise<LaunchedBrowser>;
  browser?: LaunchedBrowser;
  runs: number;
  active: number;
  retired: boolean;
}

export class BrowserLaunchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BrowserLaunchError';
  }
}

export class BrowserPool {
  private readonly current = new Map<string, Entry>();
  private readonly all = new Set<Entry>();
  private readonly closing = new Set<Promise<void>>();
  private closed = false;
  private launches = 0;
  private sandboxLogged = false;
  private readonly opts: Required<Omit<BrowserPoolOptions, 'drivers' | 'log'>> & Pick<BrowserPoolOptions, 'log'>;
  private readonly drivers: Record<BrowserKind, Driver>;

  constructor(opts: BrowserPoolOptions = {}) {
    this.opts = {
      chromiumPath: opts.chromiumPath ?? '/usr/bin/chromium',
      firefoxPath: opts.firefoxPath ?? '/usr/bin/firefox-esr',
      maxRunsPerBrowser: opts.maxRunsPerBrowser ?? 200,
      maxRssMb: opts.maxRssMb ?? 1500,
      launchTimeoutMs: opts.launchTimeoutMs ?? 30_000,
      prewarm: opts.prewarm ?? true,
      log: opts.log,
    };
    this.drivers = { chromium: launchChromium, firefox: launchFirefox, ...opts.drivers };
  }

  /** Browsers launched so far (tests, bench). */
  get launchCount(): number {
    return this.launches;
  }

  /** Resident size of every live browser tree, bytes. */
  rssBytes(): number {
    let sum = 0;
    for (const e of this.all) sum += treeRssBytes(e.browser?.pid);
    return sum;
  }

  async acquire(kind: BrowserKind, ignoreTlsErrors: boolean): Promise<Lease> {
    if (this.closed) throw new BrowserLaunchError('browser pool is closed');
    // Firefox takes acceptInsecureCerts at launch; chromium per context.
    const key = kind === 'firefox' && ignoreTlsErrors ? 'firefox:insecure' : kind;
    let entry = this.current.get(key);
    if (entry?.browser && !entry.browser.isConnected()) {
      this.retire(entry);
      entry = undefined;
    }
    entry ??= this.launch(key, kind, ignoreTlsErrors);
    entry.active++;
    entry.runs++;
    if (entry.runs >= this.opts.maxRunsPerBrowser) this.retire(entry);
    let browser: LaunchedBrowser;
    try {
      browser = await entry.ready;
    } catch (e) {
      entry.active--;
      throw e;
    }
    let released = false;
    return {
      browser,
      release: async () => {
        if (released) return;
        released = true;
        await this.release(entry);
      },
    };
  }

  private launch(key: string, kind: BrowserKind, ignoreTlsErrors: boolean): Entry {
    const entry: Entry = { key, runs: 0, active: 0, retired: false, ready: Promise.resolve(undefined as never) };
    this.launches++;
    const executablePath = kind === 'chromium' ? this.opts.chromiumPath : this.opts.firefoxPath;
    if (kind === 'chromium' && !this.sandboxLogged) {
      this.sandboxLogged = true;
      logSandbox(this.opts.log);
    }
    entry.ready = this.drivers[kind]({
      executablePath,
      ignoreTlsErrors,
      timeoutMs: this.opts.launchTimeoutMs,
      prewarm: this.opts.prewarm && this.opts.maxRunsPerBrowser > 1,
    }).then(
      (b) => {
        entry.browser = b;
        b.onDisconnected(() => {
          if (!entry.retired)
            this.opts.log?.warn({ browser: key }, 'browser disconnected; the next run launches a new one');
          this.retire(entry);
        });
        if (this.closed) void this.closeEntry(entry);
        return b;
      },
      (e: unknown) => {
        this.retire(entry);
        const first = String((e as Error)?.message ?? e).split('\n')[0];
        throw new BrowserLaunchError(`cannot launch ${kind} (${executablePath}): ${first}`);
      },
    );
    entry.ready.catch(() => undefined);
    this.current.set(key, entry);
    this.all.add(entry);
    return entry;
  }

  private retire(entry: Entry): void {
    entry.retired = true;
    if (this.current.get(entry.key) === entry) this.current.delete(entry.key);
    if (entry.active === 0) void this.closeEntry(entry);
  }

  private async release(entry: Entry): Promise<void> {
    entry.active--;
    if (!entry.retired && entry.browser && treeRssBytes(entry.browser.pid) > this.opts.maxRssMb * 1024 * 1024) {
      this.opts.log?.info({ browser: entry.key }, 'browser grew past maxRssMb; replacing it');
      this.retire(entry);
    }
    if (entry.retired && entry.active === 0) await this.closeEntry(entry);
  }

  /** Resolves once no browser is closing or preparing a spare (bench: no background work between runs). */
  async settled(): Promise<void> {
    await Promise.all([...this.closing, ...[...this.all].map((e) => e.browser?.idle?.())]);
  }

  private closeEntry(entry: Entry): Promise<void> {
    const p = this.closeEntryNow(entry);
    this.closing.add(p);
    void p.finally(() => this.closing.delete(p));
    return p;
  }

  private async closeEntryNow(entry: Entry): Promise<void> {
    if (!this.all.delete(entry)) return;
    const b = entry.browser;
    if (!b) return;
    const pid = b.pid;
    await Promise.race([b.close(), new Promise((r) => setTimeout(r, 5_000).unref())]);
    if (pid) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }

  /** Closes every browser; further acquires fail. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.all];
    this.current.clear();
    await Promise.all(
      entries.map(async (e) => {
        await e.ready.catch(() => undefined);
        e.retired = true;
        await this.closeEntry(e);
      }),
    );
  }
}

/** Says once, at the first chromium launch, whether the browser runs sandboxed and as whom (docs/security.md §12). */
function logSandbox(log: Logger | undefined): void {
  const plan = sandboxPlan();
  if (plan.sandbox) log?.info({ runAs: plan.runAs?.name }, 'chromium runs with its sandbox');
  else log?.warn({ reason: plan.reason }, 'chromium runs WITHOUT its sandbox (--no-sandbox)');
}
