/**
 * The one error class of the project. Every failure a client should see is thrown as an AppError with a code from
 * the closed list below; one handler (core/http/error-handler.ts) maps it to an HTTP status and the JSON body
 * `{ code, error, message, field? }`. Anything that is not an AppError is a bug: it becomes a 500 whose message never
 * echoes the original error.
 */
export const ERROR_CODES = {
  BAD_REQUEST: 400,
  VALIDATION: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** The request field the error is about, when there is one (e.g. "body.port"). */
  readonly field?: string;
  /** Seconds a client should wait (TOO_MANY_REQUESTS, UNAVAILABLE). */
  readonly retryAfterS?: number;

  constructor(code: ErrorCode, message: string, opts: { field?: string; retryAfterS?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CODES[code];
    this.field = opts.field;
    this.retryAfterS = opts.retryAfterS;
  }

  static badRequest(message: string, field?: string): AppError {
    return new AppError('VALIDATION', message, { field });
  }
  static notFound(message: string): AppError {
    return new AppError('NOT_FOUND', message);
  }
  static conflict(message: string): AppError {
    return new AppError('CONFLICT', message);
  }
  static forbidden(message = 'insufficient permissions'): AppError {
    return new AppError('FORBIDDEN', message);
  }
  static unauthorized(message = 'missing or invalid token'): AppError {
    return new AppError('UNAUTHORIZED', message);
  }
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}
