/** Current RFC 6238 code from a stored seed: a base32 string or an otpauth://totp/... URI (algorithm, digits and
 * period taken from the URI). */
import * as OTPAuth from 'otpauth';
import { TemplateError } from './templates.js';

export function totpFromSeed(seed: string, nowMs: number = Date.now()): string {
  const s = seed.trim();
  let totp: OTPAuth.TOTP;
  try {
    if (s.toLowerCase().startsWith('otpauth://')) {
      const parsed = OTPAuth.URI.parse(s);
      if (!(parsed instanceof OTPAuth.TOTP)) throw new Error('not a TOTP URI');
      totp = parsed;
    } else {
      totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(s.replace(/[\s-]/g, '').toUpperCase()) });
    }
    return totp.generate({ timestamp: nowMs });
  } catch {
    // The seed itself must never reach a message.
    throw new TemplateError('stored TOTP seed is neither base32 nor an otpauth://totp URI');
  }
}
