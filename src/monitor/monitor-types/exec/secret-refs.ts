/**
 * The secret references of an exec monitor's steps, each with the origin it would be typed on: the origin of the last
 * `goto` before the step (the first step is always a goto). At run time the page's actual origin is checked again
 * before a value is typed (a click or a redirect can move the page), see step-runner.ts.
 */
import type { SecretRef } from '../types.js';
import type { Step } from './steps.js';
import { findTemplates } from './templates.js';

/** The origin of an http(s) URL (undefined for none, about:blank, data: and the like). */
export function originOf(url: string | undefined): string | undefined {
  try {
    const o = url ? new URL(url).origin : undefined;
    return o === 'null' ? undefined : o;
  } catch {
    return undefined;
  }
}

export function stepSecretRefs(steps: readonly Step[]): SecretRef[] {
  const out: SecretRef[] = [];
  let origin: string | undefined;
  for (const [i, s] of steps.entries()) {
    const where = `steps[${i}] ("${s.name}")`;
    if (s.action === 'goto') origin = originOf(s.url);
    if ((s.action === 'fill' || s.action === 'select') && s.value !== undefined)
      for (const r of findTemplates(s.value))
        if (r.valid) out.push({ kind: r.kind as SecretRef['kind'], ref: r.ref, origin, field: 'steps', where });
    if (s.action === 'totp' && s.secret) out.push({ kind: 'totp', ref: s.secret, origin, field: 'steps', where });
  }
  return out;
}
