/**
 * IANA time zones for schedules: validating a zone name (the `timezone` setting) and writing a Unix-ms instant as
 * ISO 8601 local time with its UTC offset in a zone (`2025-03-30T03:00:00.000+02:00`), both with Intl only.
 */

/** True when `name` is an IANA zone this runtime knows (`Europe/Berlin`, `UTC`, `Etc/GMT+5`); case-insensitive. */
export function isTimezone(name: string): boolean {
  if (typeof name !== 'string' || name.trim() !== name || name === '' || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timezone, f);
  }
  return f;
}

const pad = (n: number, w = 2): string => String(Math.abs(n)).padStart(w, '0');

/** `ms` as local time in `timezone` with its offset, e.g. 2025-10-26T02:30:00.000+01:00 (UTC gives +00:00). */
export function isoInZone(ms: number, timezone: string): string {
  const parts: Record<string, number> = {};
  for (const p of formatterFor(timezone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const msPart = ((ms % 1000) + 1000) % 1000;
  const localAsUtc = Date.UTC(parts.year!, parts.month! - 1, parts.day, parts.hour, parts.minute, parts.second);
  const offsetMin = Math.round((localAsUtc + msPart - ms) / 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  return (
    `${pad(parts.year!, 4)}-${pad(parts.month!)}-${pad(parts.day!)}T${pad(parts.hour!)}:${pad(parts.minute!)}:` +
    `${pad(parts.second!)}.${pad(msPart, 3)}${sign}${pad(Math.floor(Math.abs(offsetMin) / 60))}:${pad(Math.abs(offsetMin) % 60)}`
  );
}
