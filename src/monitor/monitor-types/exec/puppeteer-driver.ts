/**
 * Firefox (Debian firefox-esr) through puppeteer-core over WebDriver BiDi; Playwright's own Firefox build cannot be
 * had here. No video and no HAR (puppeteer's screencast and HAR need CDP). Selectors are translated from the
 * Playwright syntax by toPuppeteerSelector.
 */
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import {
  toPuppeteerSelector,
  type Driver,
  type LaunchedBrowser,
  type Session,
  type SessionOptions,
} from './session.js';

type State = 'visible' | 'hidden' | 'attached' | 'detached';

class PuppeteerSession implements Session {
  private closing?: Promise<{ videoPath?: string }>;

  constructor(
    private readonly context: BrowserContext,
    private readonly page: Page,
  ) {}

  private async handle(selector: string, timeoutMs: number, visible = true) {
    const h = await this.page.waitForSelector(toPuppeteerSelector(selector), { visible, timeout: timeoutMs });
    if (!h) throw new Error(`no element matches ${selector}`);
    return h;
  }
  private loc(selector: string, timeoutMs: number) {
    return this.page.locator(toPuppeteerSelector(selector)).setTimeout(timeoutMs);
  }

  async goto(url: string, timeoutMs: number) {
    const res = await this.page.goto(url, { timeout: timeoutMs, waitUntil: 'load' });
    return { status: res?.status() };
  }
  async click(selector: string, timeoutMs: number) {
    await this.loc(selector, timeoutMs).click();
  }
  async fill(selector: string, value: string, timeoutMs: number) {
    await this.loc(selector, timeoutMs).fill(value);
  }
  async select(selector: string, value: string, timeoutMs: number) {
    const h = await this.handle(selector, timeoutMs);
    const chosen = await h.select(value);
    if (chosen.length === 0) throw new Error(`no option "${value}" in ${selector}`);
  }
  async press(selector: string | undefined, key: string, timeoutMs: number) {
    if (selector) await (await this.handle(selector, timeoutMs)).press(key as never);
    else await this.page.keyboard.press(key as never);
  }
  async check(selector: string, checked: boolean, timeoutMs: number) {
    const h = await this.handle(selector, timeoutMs);
    const now = await h.evaluate((el) => (el as HTMLInputElement).checked);
    if (now !== checked) await h.click();
  }
  async hover(selector: string, timeoutMs: number) {
    await this.loc(selector, timeoutMs).hover();
  }
  async waitForSelector(selector: string, state: State, timeoutMs: number) {
    const sel = toPuppeteerSelector(selector);
    if (state === 'visible') await this.page.waitForSelector(sel, { visible: true, timeout: timeoutMs });
    else if (state === 'attached') await this.page.waitForSelector(sel, { timeout: timeoutMs });
    else await this.page.waitForSelector(sel, { hidden: true, timeout: timeoutMs });
  }
  async waitForNetworkIdle(timeoutMs: number) {
    await this.page.waitForNetworkIdle({ idleTime: 500, timeout: timeoutMs });
  }
  async text(selector: string | undefined, timeoutMs: number) {
    const h = await this.handle(selector ?? 'body', timeoutMs, false);
    return h.evaluate((el) => (el as HTMLElement).innerText ?? el.textContent ?? '');
  }
  async attribute(selector: string, name: string, timeoutMs: number) {
    const h = await this.handle(selector, timeoutMs, false);
    return h.evaluate((el, n) => el.getAttribute(n), name);
  }
  url() {
    return this.page.url();
  }
  async screenshot(path: string, fullPage: boolean) {
    await this.page.screenshot({ path, fullPage, type: 'png' });
  }
  async evaluate<T>(expression: string): Promise<T> {
    return (await this.page.evaluate(expression)) as T;
  }
  close() {
    this.closing ??= this.context.close().then(
      () => ({}),
      () => ({}),
    );
    return this.closing;
  }
}

class PuppeteerBrowser implements LaunchedBrowser {
  readonly kind = 'firefox' as const;
  readonly supports = { video: false, har: false };

  constructor(private readonly browser: Browser) {}

  get pid() {
    return this.browser.process()?.pid;
  }
  isConnected() {
    return this.browser.connected;
  }
  onDisconnected(cb: () => void) {
    this.browser.on('disconnected', cb);
    return () => void this.browser.off('disconnected', cb);
  }
  async newSession(opts: SessionOptions): Promise<Session> {
    const context = await this.browser.createBrowserContext();
    try {
      const page = await context.newPage();
      const d = opts.device;
      await page.setViewport({
        ...(d?.viewport ?? opts.viewport),
        deviceScaleFactor: d?.deviceScaleFactor,
        isMobile: d?.isMobile,
        hasTouch: d?.hasTouch,
      });
      if (d?.userAgent) await page.setUserAgent(d.userAgent);
      const fence = opts.fence;
      if (fence) {
        await page.setRequestInterception(true);
        page.on('request', (req) => {
          void fence(req.url())
            .catch(() => 'network policy check failed')
            .then((reason) => (reason ? req.abort('blockedbyclient') : req.continue()))
            .catch(() => undefined);
        });
      }
      return new PuppeteerSession(context, page);
    } catch (e) {
      await context.close().catch(() => undefined);
      throw e;
    }
  }
  async close() {
    await this.browser.close().catch(() => undefined);
    this.browser.process()?.kill('SIGKILL');
  }
}

export const launchFirefox: Driver = async (opts) => {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: opts.executablePath,
    headless: true,
    acceptInsecureCerts: opts.ignoreTlsErrors,
    timeout: opts.timeoutMs,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    extraPrefsFirefox: {
      'app.update.enabled': false,
      'browser.safebrowsing.malware.enabled': false,
      'browser.safebrowsing.phishing.enabled': false,
      'network.http.http3.enable': false,
      'datareporting.policy.dataSubmissionEnabled': false,
      'toolkit.telemetry.enabled': false,
    },
  });
  return new PuppeteerBrowser(browser);
};
