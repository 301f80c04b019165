/**
 * Structured logs (pino) to `<logDir>/<service>.log`, rotated daily or at 10 MB and gzipped to
 * `<service>-YYYYMMDD-HHMM-N.log.gz` (14 kept; with a name generator rotating-file-stream adds no `.gz` itself), optionally mirrored to stdout. The level changes live.
 * Secrets never reach a log: the redact list removes passwords, tokens and authorization headers wherever they appear.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import type { LogLevel } from '../config/env.js';

export const REDACT_PATHS = [
  'password',
  '*.password',
  'token',
  '*.token',
  'req.headers.authorization',
  'headers.authorization',
  '*.smtpPassword',
  '*.smtpPwd',
  '*.dbPwd',
  '*.basicAuthPwd',
  '*.community',
  '*.v3AuthPassword',
  '*.v3PrivPassword',
];

export interface ServiceLogger {
  log: Logger;
  logDir: string;
  /** The current (unrotated) log file's path. */
  file: string;
  setLevel(level: LogLevel): void;
  close(): Promise<void>;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

export function rotatedName(service: string) {
  return (time: number | Date | null, index?: number): string => {
    if (!time) return `${service}.log`;
    const d = typeof time === 'number' ? new Date(time) : time;
    const stamp = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}-${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}`;
    return `${service}-${stamp}-${index ?? 1}.log.gz`;
  };
}

export function createServiceLogger(opts: {
  service: string;
  logDir: string;
  level: LogLevel;
  stdout?: boolean;
}): ServiceLogger {
  fs.mkdirSync(opts.logDir, { recursive: true, mode: 0o700 });
  const fileStream: RotatingFileStream = createStream(rotatedName(opts.service), {
    path: opts.logDir,
    mode: 0o600,
    size: '10M',
    interval: '1d',
    compress: 'gzip',
    maxFiles: 14,
    history: `.${opts.service}-log-history`,
  });
  fileStream.on('error', () => undefined);
  const streams: pino.StreamEntry[] = [{ level: 'trace', stream: fileStream }];
  if (opts.stdout) streams.push({ level: 'warn', stream: process.stdout });
  const log = pino(
    { level: opts.level, base: { service: opts.service }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    pino.multistream(streams),
  );
  return {
    log,
    logDir: opts.logDir,
    file: path.join(opts.logDir, `${opts.service}.log`),
    setLevel(level) {
      log.level = level;
    },
    close: () =>
      new Promise<void>((resolve) => {
        log.flush(() => fileStream.end(() => resolve()));
      }),
  };
}
