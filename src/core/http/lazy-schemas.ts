/**
 * Route schemas compile on their route's first request instead of at start. Fastify compiles every route's request
 * validators (Ajv) and response serializers (fast-json-stringify) while it gets ready: ≈ 2 s of a 2-core machine's
 * start and ≈ 25 MB of heap for the monitor's ~150 routes, most of which a given deployment rarely calls
 * (docs/benchmarks.md "start to listening and idle RSS"). Each compiled function is the one Fastify would have made,
 * built from the same schema with the same options; only the moment changes. A schema that does not compile fails
 * its route's first request (500) instead of the start: the contract tests compile every route's schemas.
 */
import type { FastifyServerOptions } from 'fastify';
import type { Ajv, AnySchema, ValidateFunction } from 'ajv';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Validator = ValidateFunction;

/** A validator that compiles at its first call. Fastify reads `schemaEnv` (to pass the parent data: Ajv may then
 * replace a root value) and, after a failed call, `errors`: both are the compiled function's. */
function lazyValidator(build: () => Validator): Validator {
  let fn: Validator | undefined;
  const v = function (this: unknown, data: unknown, cxt?: Parameters<ValidateFunction>[1]) {
    fn ??= build();
    const ok = fn.call(this, data, cxt);
    v.errors = fn.errors;
    return ok;
  } as Validator;
  Object.defineProperty(v, 'schemaEnv', { get: () => (fn ??= build()).schemaEnv });
  return v;
}

/** For Fastify's `ajv.onCreate`: the instance's `compile` returns validators that compile at their first call. */
export function compileValidatorsOnFirstUse(ajv: Ajv): void {
  const compile = ajv.compile.bind(ajv);
  ajv.compile = ((schema: AnySchema) => lazyValidator(() => compile(schema))) as Ajv['compile'];
}

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;

/** For Fastify's `schemaController.compilersFactory.buildSerializer`: Fastify's default serializer compiler, each
 * response serializer built at its first response. */
export const serializersOnFirstUse: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let fn: ((data: unknown) => string) | undefined;
    return (data: unknown) => (fn ??= compile(route))(data);
  };
};
