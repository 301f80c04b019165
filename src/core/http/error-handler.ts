/**
 * The one place errors become HTTP responses. Body of every error:
 *   { "code": <HTTP status>, "error": "<ERROR_CODE>", "message": "<what is wrong>", "field"?: "<body.port>" }
 * AppError → its status. Fastify's own errors (schema validation, bad JSON, oversized body, wrong content type)
 * → 400/413/415. Anything else is a bug → 500 with a generic message (the original is logged, never echoed).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CODES, type ErrorCode } from '../errors.js';

export interface ErrorBody {
  code: number;
  error: ErrorCode;
  message: string;
  field?: string;
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_INVALID_TYPE: 'BAD_REQUEST',
  FST_ERR_VALIDATION: 'VALIDATION',
};

function validationField(err: FastifyError): { field?: string; message: string } {
  const first = err.validation?.[0];
  if (!first) return { message: err.message };
  const ctx = err.validationContext ?? 'body';
  const params = first.params;
  const prop =
    (params?.missingProperty as string | undefined) ?? (params?.additionalProperty as string | undefined) ?? '';
  const pathPart = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const field = [ctx, pathPart, prop].filter(Boolean).join('.');
  let message = `${field} ${first.message ?? 'is invalid'}`;
  if (params?.additionalProperty) message = `${field} is not a known field`;
  if (params?.allowedValues) message += `: ${(params.allowedValues as unknown[]).join(', ')}`;
  return { field, message };
}

export function toErrorBody(err: unknown): { status: number; body: ErrorBody; retryAfterS?: number } {
  if (err instanceof AppError) {
    const body: ErrorBody = { code: err.status, error: err.code, message: err.message };
    if (err.field) body.field = err.field;
    return { status: err.status, body, retryAfterS: err.retryAfterS };
  }
  const fe = err as FastifyError;
  const mapped = fe && typeof fe.code === 'string' ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped === 'VALIDATION' || (fe?.validation && fe.validation.length)) {
    const { field, message } = validationField(fe);
    return { status: 400, body: { code: 400, error: 'VALIDATION', message, ...(field ? { field } : {}) } };
  }
  if (mapped) {
    const status = ERROR_CODES[mapped];
    return { status, body: { code: status, error: mapped, message: fe.message } };
  }
  if (fe && typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    const code: ErrorCode =
      fe.statusCode === 404 ? 'NOT_FOUND' : fe.statusCode === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST';
    return { status: fe.statusCode, body: { code: fe.statusCode, error: code, message: fe.message } };
  }
  return { status: 500, body: { code: 500, error: 'INTERNAL', message: 'internal server error' } };
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const { status, body, retryAfterS } = toErrorBody(err);
    if (status >= 500) req.log.error({ err }, 'request failed');
    else req.log.debug({ code: body.error, field: body.field }, body.message);
    if (retryAfterS !== undefined) void reply.header('retry-after', String(retryAfterS));
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler((req: FastifyRequest, reply: FastifyReply) => {
    const body: ErrorBody = {
      code: 404,
      error: 'NOT_FOUND',
      message: `route ${req.method} ${req.url.split('?')[0]} not found`,
    };
    return reply.code(404).send(body);
  });
}

/** Reusable OpenAPI schema of the error body. */
export const ERROR_SCHEMA = {
  type: 'object',
  description: 'Every error: code (HTTP status), error (closed code list), message, field (when one field is at fault)',
  properties: {
    code: { type: 'integer' },
    error: { type: 'string', enum: Object.keys(ERROR_CODES) },
    message: { type: 'string' },
    field: { type: 'string' },
  },
  required: ['code', 'error', 'message'],
} as const;
