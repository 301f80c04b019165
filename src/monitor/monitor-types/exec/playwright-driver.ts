/** Chromium through playwright-core (Debian's /usr/bin/chromium; no browser download). Video and HAR supported. */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findChildPidByArg } from './proc.js';
import { launcherFor, sandboxPlan } from './sandbox.js';
import type { Fence } from './fence.js';
import { MAX_REPORT_BYTES, MAX_TIMING_REPORTS, timingInitScript, type RawTiming } from './timings.js';
import { CHROMIUM_ARGS, type Driver, type LaunchedBrowser, type Session, type SessionOptions } from './session.js';

async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch {
    // EXDEV (temp dir on another filesystem) or a missing HAR: copy, then remove.
    await copyFile(from, to).catch(() => undefined);
    await rm(from, { force: true }).catch(() => undefined);
  }
}

class PlaywrightSession implements Session {
  private closing?: Promise<{ videoPath?: string }>;

  constructor(
    private readonly context: BrowserContext,
    private readonly page: Page,
    private readonly harTmp?: string,
    private readonly harPath?: string,
    /** Called once the context is closed (the browser prepares the next spare then). */
    private readonly onClosed?: () => void,
    private readonly timingRef?: TimingRef,
  ) {}

  onTiming(sink: (raw: RawTiming) => void) {
    if (this.timingRef) {
      this.timingRef.sink = sink;
      this.timingRef.left = MAX_TIMING_REPORTS;
    }
  }

  async goto(url: string, timeoutMs: number) {
    const res = await this.page.goto(url, { timeout: timeoutMs, waitUntil: 'load' });
    return { status: res?.status() };
  }
  async click(selector: string, timeoutMs: number) {
    await this.page.locator(selector).first().click({ timeout: timeoutMs });
  }
  async fill(selector: string, value: string, timeoutMs: number) {
    await this.page.locator(selector).first().fill(value, { timeout: timeoutMs });
  }
  async select(selector: string, value: string, timeoutMs: number) {
    await this.page.locator(selector).first().selectOption(value, { timeout: timeoutMs });
  }
  async press(selector: string | undefined, key: string, timeoutMs: number) {
    if (selector) await this.page.locator(selector).first().press(key, { timeout: timeoutMs });
    else await this.page.keyboard.press(key);
  }
  async check(selector: string, checked: boolean, timeoutMs: number) {
    await this.page.locator(selector).first().setChecked(checked, { timeout: timeoutMs });
  }
  async hover(selector: string, timeoutMs: number) {
    await this.page.locator(selector).first().hover({ timeout: timeoutMs });
  }
  async waitForSelector(selector: string, state: 'visible' | 'hidden' | 'attached' | 'detached', timeoutMs: number) {
    await this.page.locator(selector).first().waitFor({ state, timeout: timeoutMs });
  }
  async waitForNetworkIdle(timeoutMs: number) {
    await this.page.waitForLoadState('networkidle', { timeout: timeoutMs });
  }
  async text(selector: string | undefined, timeoutMs: number) {
    return this.page
      .locator(selector ?? 'body')
      .first()
      .innerText({ timeout: timeoutMs });
  }
  async attribute(selector: string, name: string, timeoutMs: number) {
    return this.page.locator(selector).first().getAttribute(name, { timeout: timeoutMs });
  }
  url() {
    return this.page.url();
  }
  async screenshot(path: string, fullPage: boolean) {
    await this.page.screenshot({ path, fullPage, timeout: 10_000 });
  }
  async evaluate<T>(expression: string): Promise<T> {
    return await this.page.evaluate(expression);
  }
  close() {
    this.closing ??= (async () => {
      const video = this.page.video();
      await this.context.close().catch(() => undefined);
      this.onClosed?.();
      if (this.harTmp && this.harPath) await moveFile(this.harTmp, this.harPath);
      const videoPath = video ? await video.path().catch(() => undefined) : undefined;
      return { videoPath };
    })();
    return this.closing;
  }
}

interface Prepared {
  context: BrowserContext;
  page: Page;
  /** Where Playwright writes the HAR; moved to the session's recordHarPath after close. */
  harTmp?: string;
  /** The run's network fence; the context's route handler (installed at creation) asks it about every request. */
  fenceRef?: { current?: Fence };
  timingRef: TimingRef;
}

/** Where the pages of a context push their timings (set when a run takes the context). */
interface TimingRef {
  sink?: (raw: RawTiming) => void;
  /** Reports still read this run (the page can call the binding itself: exec/timings.ts bounds). */
  left?: number;
}

const TIMING_BINDING = '__sentinelExecTiming';
const TIMING_SCRIPT = timingInitScript(TIMING_BINDING);

/** Lets the page's top-level documents report their own timings (exec/timings.ts) through a plain CDP binding: a
 * report is one event, with no reply into the page. */
async function installTimingReports(context: BrowserContext, page: Page, ref: TimingRef): Promise<void> {
  const cdp = await context.newCDPSession(page);
  cdp.on('Runtime.bindingCalled', (e: { name: string; payload: string }) => {
    if (e.name !== TIMING_BINDING || !ref.sink || !ref.left || e.payload.length > MAX_REPORT_BYTES) return;
    ref.left--;
    try {
      ref.sink?.(JSON.parse(e.payload) as RawTiming);
    } catch {
      /* not ours */
    }
  });
  await cdp.send('Runtime.enable'); // without it the binding is not installed in new documents
  await cdp.send('Runtime.addBinding', { name: TIMING_BINDING });
  await context.addInitScript(TIMING_SCRIPT);
}

/** WebSockets do not go through route(): they get their own interception, the same fence. Per page: a context-level
 * routeWebSocket made the next context's creation hang after a browser crash (exec.test.ts, crash test). */
async function fenceWebSockets(page: Page, fenceRef: { current?: Fence }): Promise<void> {
  await page.routeWebSocket(/.*/, async (ws) => {
    const fence = fenceRef.current;
    const reason = fence ? await fence(ws.url()).catch(() => 'network policy check failed') : NO_RUN_YET;
    if (reason) await ws.close({ code: 1008, reason: 'blocked by the network policy' }).catch(() => undefined);
    else ws.connectToServer();
  });
}

const SPARE_IDLE_MS = 120_000;
const NO_RUN_YET = 'no run owns this context yet';

/**
 * Besides launching, this keeps at most one *spare* fresh context (with its blank page and its request interception
 * already on) for the options of the last run without video. It is created in the background once a run's context
 * is closed, so it never competes with a running transaction for the browser; the next run with the same options
 * takes it instead of waiting ~100-300 ms for a context and a renderer. It is never used twice. HAR goes to a temp
 * path so that a spare can be made before the run's artifact path is known.
 */
class PlaywrightBrowser implements LaunchedBrowser {
  readonly kind = 'chromium' as const;
  readonly supports = { video: true, har: true };
  private spare?: { key: string; ready: Promise<Prepared | undefined>; timer?: NodeJS.Timeout };
  private harDir?: string;

  constructor(
    private readonly browser: Browser,
    readonly pid: number | undefined,
    private readonly prewarm: boolean,
  ) {}

  isConnected() {
    return this.browser.isConnected();
  }
  onDisconnected(cb: () => void) {
    this.browser.on('disconnected', cb);
    return () => void this.browser.off('disconnected', cb);
  }
  async idle() {
    await this.spare?.ready;
  }

  private async create(opts: SessionOptions, withHar: boolean, withFence: boolean): Promise<Prepared> {
    const d = opts.device;
    let harTmp: string | undefined;
    if (withHar) {
      this.harDir ??= await mkdtemp(join(tmpdir(), 'exec-har-'));
      harTmp = join(this.harDir, `${randomUUID()}.har`);
    }
    const context = await this.browser.newContext({
      viewport: d?.viewport ?? opts.viewport,
      userAgent: d?.userAgent,
      deviceScaleFactor: d?.deviceScaleFactor,
      isMobile: d?.isMobile,
      hasTouch: d?.hasTouch,
      ignoreHTTPSErrors: opts.ignoreTlsErrors,
      serviceWorkers: 'block',
      acceptDownloads: false,
      recordVideo: opts.recordVideoDir ? { dir: opts.recordVideoDir, size: d?.viewport ?? opts.viewport } : undefined,
      recordHar: harTmp ? { path: harTmp, content: 'omit' } : undefined,
    });
    try {
      const fenceRef: Prepared['fenceRef'] = withFence ? {} : undefined;
      if (fenceRef) {
        // Installed before the page exists; until a run sets its fence, every request is refused.
        await context.route('**/*', async (route) => {
          const fence = fenceRef.current;
          const reason = fence
            ? await fence(route.request().url()).catch(() => 'network policy check failed')
            : NO_RUN_YET;
          await (reason ? route.abort('blockedbyclient') : route.continue()).catch(() => undefined);
        });
      }
      const timingRef: TimingRef = {};
      const page = await context.newPage();
      if (fenceRef) {
        await fenceWebSockets(page, fenceRef);
        // Popups (window.open): their requests go through the context's route; their WebSockets are fenced once
        // the page is known (a WebSocket opened in the popup's first moments may be missed: docs/exec-monitors.md).
        context.on('page', (p) => void fenceWebSockets(p, fenceRef).catch(() => undefined));
      }
      await installTimingReports(context, page, timingRef);
      return { context, page, harTmp, fenceRef, timingRef };
    } catch (e) {
      await context.close().catch(() => undefined);
      throw e;
    }
  }

  private dropSpare(): void {
    const s = this.spare;
    this.spare = undefined;
    if (!s) return;
    clearTimeout(s.timer);
    void s.ready
      .then(async (p) => {
        await p?.context.close();
        if (p?.harTmp) await rm(p.harTmp, { force: true });
      })
      .catch(() => undefined);
  }

  private makeSpare(key: string, opts: SessionOptions): void {
    if (!this.prewarm || !this.browser.isConnected() || this.spare?.key === key) return;
    this.dropSpare();
    const ready = this.create(
      { ...opts, recordVideoDir: undefined },
      opts.recordHarPath !== undefined,
      opts.fence !== undefined,
    ).catch(() => undefined);
    const timer = setTimeout(() => this.spare?.ready === ready && this.dropSpare(), SPARE_IDLE_MS);
    timer.unref();
    this.spare = { key, ready, timer };
  }

  async newSession(opts: SessionOptions): Promise<Session> {
    const d = opts.device;
    const key = opts.recordVideoDir
      ? undefined
      : JSON.stringify([d ?? opts.viewport, opts.ignoreTlsErrors, !!opts.recordHarPath, !!opts.fence]);
    let prepared: Prepared | undefined;
    if (key && this.spare?.key === key) {
      const s = this.spare;
      this.spare = undefined;
      clearTimeout(s.timer);
      prepared = await s.ready;
    }
    prepared ??= await this.create(opts, opts.recordHarPath !== undefined, opts.fence !== undefined);
    if (prepared.fenceRef) prepared.fenceRef.current = opts.fence;
    const onClosed = key ? () => this.makeSpare(key, opts) : undefined;
    return new PlaywrightSession(
      prepared.context,
      prepared.page,
      prepared.harTmp,
      opts.recordHarPath,
      onClosed,
      prepared.timingRef,
    );
  }

  async close() {
    this.dropSpare();
    await this.browser.close().catch(() => undefined);
    if (this.harDir) await rm(this.harDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

export const launchChromium: Driver = async (opts) => {
  // playwright-core keeps the browser's pid private: a marker flag (ignored by chromium) finds it in /proc.
  const marker = `--sentinel-exec-browser=${randomUUID()}`;
  // The sandbox whenever this machine allows it; as root the browser runs as an unprivileged account (sandbox.ts).
  const plan = sandboxPlan();
  const browser = await chromium.launch({
    executablePath: launcherFor(opts.executablePath, plan),
    headless: true,
    chromiumSandbox: plan.sandbox,
    args: [...CHROMIUM_ARGS, marker],
    timeout: opts.timeoutMs,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  return new PlaywrightBrowser(browser, findChildPidByArg(marker), opts.prewarm ?? true);
};
