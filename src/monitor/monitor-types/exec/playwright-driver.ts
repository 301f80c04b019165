/** Chromium through playwright-core (Debian's /usr/bin/chromium; no browser download). Video and HAR supported. */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { findChildPidByArg } from './proc.js';
import { CHROMIUM_ARGS, type Driver, type LaunchedBrowser, type Session, type SessionOptions } from './session.js';

class PlaywrightSession implements Session {
  private closing?: Promise<{ videoPath?: string }>;

  constructor(
    private readonly context: BrowserContext,
    private readonly page: Page,
  ) {}

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
    return this.page.locator(selector ?? 'body').first().innerText({ timeout: timeoutMs });
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
    return (await this.page.evaluate(expression)) as T;
  }
  close() {
    this.closing ??= (async () => {
      const video = this.page.video();
      await this.context.close().catch(() => undefined);
      const videoPath = video ? await video.path().catch(() => undefined) : undefined;
      return { videoPath };
    })();
    return this.closing;
  }
}

class PlaywrightBrowser implements LaunchedBrowser {
  readonly kind = 'chromium' as const;
  readonly supports = { video: true, har: true };

  constructor(
    private readonly browser: Browser,
    readonly pid: number | undefined,
  ) {}

  isConnected() {
    return this.browser.isConnected();
  }
  onDisconnected(cb: () => void) {
    this.browser.on('disconnected', cb);
  }
  async newSession(opts: SessionOptions): Promise<Session> {
    const d = opts.device;
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
      recordHar: opts.recordHarPath ? { path: opts.recordHarPath, content: 'omit' } : undefined,
    });
    try {
      const page = await context.newPage();
      return new PlaywrightSession(context, page);
    } catch (e) {
      await context.close().catch(() => undefined);
      throw e;
    }
  }
  async close() {
    await this.browser.close().catch(() => undefined);
  }
}

export const launchChromium: Driver = async (opts) => {
  // playwright-core keeps the browser's pid private: a marker flag (ignored by chromium) finds it in /proc.
  const marker = `--sentinel-exec-browser=${randomUUID()}`;
  const browser = await chromium.launch({
    executablePath: opts.executablePath,
    headless: true,
    chromiumSandbox: false,
    args: [...CHROMIUM_ARGS, marker],
    timeout: opts.timeoutMs,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  return new PlaywrightBrowser(browser, findChildPidByArg(marker));
};
