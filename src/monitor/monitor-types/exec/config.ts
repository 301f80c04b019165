/** The exec type's create fields (all strings, as the API stores them) and their parsing/validation. */
import { createRequire } from 'node:module';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../../core/errors.js';
import type { MonitorConfig } from '../types.js';
import { ARTIFACT_POLICIES, type ArtifactPolicy } from './artifacts.js';
import { BROWSER_KINDS, type BrowserKind, type DeviceDescriptor } from './session.js';
import { parseSteps, type Step } from './steps.js';

const bool = Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')]));

export const execFields = Type.Object({
  steps: Type.Union(
    [
      Type.String({ minLength: 2, maxLength: 200_000 }),
      Type.Array(Type.Record(Type.String(), Type.Unknown()), { minItems: 1, maxItems: 100 }),
    ],
    { description: 'JSON array of steps (a string, or the array itself); see docs/exec-monitors.md' },
  ),
  browser: Type.Optional(
    Type.Union(
      BROWSER_KINDS.map((k) => Type.Literal(k)),
      { description: 'default chromium' },
    ),
  ),
  viewport: Type.Optional(
    Type.String({ pattern: '^[0-9]{2,4}x[0-9]{2,4}$', description: 'WIDTHxHEIGHT, default 1280x720' }),
  ),
  device: Type.Optional(Type.String({ maxLength: 80, description: 'Playwright device name, e.g. "iPhone 13"' })),
  artifacts: Type.Optional(
    Type.Union(
      ARTIFACT_POLICIES.map((p) => Type.Literal(p)),
      { description: 'default on-failure' },
    ),
  ),
  video: bool,
  har: bool,
  ignoreTlsErrors: bool,
});

export interface ExecOptions {
  steps: Step[];
  browser: BrowserKind;
  viewport: { width: number; height: number };
  device?: DeviceDescriptor;
  artifacts: ArtifactPolicy;
  video: boolean;
  har: boolean;
  ignoreTlsErrors: boolean;
}

function parseBool(config: MonitorConfig, field: string, dflt: boolean): boolean {
  const v = config[field];
  if (v === undefined || v === '') return dflt;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw AppError.badRequest(`${field} must be "true" or "false"`, field);
}

function oneOf<T extends string>(config: MonitorConfig, field: string, allowed: readonly T[], dflt: T): T {
  const v = config[field];
  if (v === undefined || v === '') return dflt;
  if (!(allowed as readonly string[]).includes(v))
    throw AppError.badRequest(`${field} must be one of ${allowed.join(', ')}`, field);
  return v as T;
}

export function parseViewport(raw: string | undefined): { width: number; height: number } {
  const m = /^(\d{2,4})x(\d{2,4})$/.exec(raw || '1280x720');
  const width = Number(m?.[1]);
  const height = Number(m?.[2]);
  if (!m || width < 100 || height < 100 || width > 4000 || height > 4000) {
    throw AppError.badRequest('viewport must be WIDTHxHEIGHT between 100 and 4000, e.g. 1280x720', 'viewport');
  }
  return { width, height };
}

type Devices = typeof import('playwright-core').devices;
let devices: Devices | undefined;
/** Playwright's device list, loaded (synchronously: validation is) by the first config naming a device: the library
 * is ≈ 80 MB resident, which a service without such a monitor never pays. */
function playwrightDevices(): Devices {
  devices ??= (createRequire(import.meta.url)('playwright-core') as typeof import('playwright-core')).devices;
  return devices;
}

export function deviceDescriptor(name: string | undefined): DeviceDescriptor | undefined {
  if (!name) return undefined;
  const d = (playwrightDevices() as Record<string, Devices[string] | undefined>)[name];
  if (!d) throw AppError.badRequest(`device "${name}" is not a known Playwright device name`, 'device');
  return {
    viewport: d.viewport,
    userAgent: d.userAgent,
    deviceScaleFactor: d.deviceScaleFactor,
    isMobile: d.isMobile,
    hasTouch: d.hasTouch,
  };
}

/** Parses a stored config; throws AppError.badRequest naming the field (and the step, for steps). */
export function parseExecConfig(config: MonitorConfig): ExecOptions {
  const raw = (config as Record<string, unknown>).steps;
  if (raw === undefined || raw === '') throw AppError.badRequest('steps is required', 'steps');
  return {
    steps: parseSteps(raw),
    browser: oneOf(config, 'browser', BROWSER_KINDS, 'chromium'),
    viewport: parseViewport(config.viewport),
    device: deviceDescriptor(config.device),
    artifacts: oneOf(config, 'artifacts', ARTIFACT_POLICIES, 'on-failure'),
    video: parseBool(config, 'video', false),
    har: parseBool(config, 'har', true),
    ignoreTlsErrors: parseBool(config, 'ignoreTlsErrors', false),
  };
}
