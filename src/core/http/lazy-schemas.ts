/**
 * Route schemas compile on their route's first request instead of at start. Fastify compiles every route's request
 * validators (Ajv) and response serializers (fast-json-stringify) while it gets ready: ≈ 2 s of a 2-core machine's
 * start and ≈ 25 MB of heap for the monitor's ~150 routes, most of which a given deployment rarely calls
 * (docs/benchmarks.md "start to listening and idle RSS"). Each compiled function is the one Fastify would have made,
 * built by Fastify's own default compilers (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler) from the
 * same schema with the same options; only the moment changes. The compilers themselves (Ajv with its formats,
 * fast-json-stringify) load at the first request that needs one, not at start (≈ 4 MB of the agent's idle RSS).
 * A schema that does not compile fails its route's first request (500) instead of the start: the contract tests
 * compile every route's schemas. Fastify treats a compiler given here as custom and does not lower-case the keys of
 * `headers` schemas: no route declares one (a route that does must spell its header names in lower case).
 */
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';
import type { ValidateFunction } from 'ajv';

/** Loads what Fastify itself would load, from Fastify's own dependencies (the same copies, at Fastify's ranges). */
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'));

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

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type ValidatorFactory = NonNullable<CompilersFactory['buildValidator']>;
type SerializerFactory = NonNullable<CompilersFactory['buildSerializer']>;
type RouteCompiler<F> = (route: unknown) => F;

/** For Fastify's `schemaController.compilersFactory.buildValidator`: Fastify's default validator compiler (one Ajv
 * instance with Fastify's Ajv options, ajv-formats and `ajv.onCreate`), created at the first request that validates,
 * each route's validator compiled at its own first call. */
export const validatorsOnFirstUse = ((externalSchemas: unknown, options: unknown) => {
  let compile: RouteCompiler<Validator> | undefined;
  const build = (route: unknown): Validator => {
    if (!compile) {
      const { AjvCompiler } = fastifyRequire('@fastify/ajv-compiler') as typeof import('@fastify/ajv-compiler');
      compile = AjvCompiler()(externalSchemas as never, options as never) as unknown as RouteCompiler<Validator>;
    }
    return compile(route);
  };
  return (route: unknown) => lazyValidator(() => build(route));
}) as unknown as ValidatorFactory;

/** For Fastify's `schemaController.compilersFactory.buildSerializer`: Fastify's default serializer compiler, each
 * response serializer built at its first response. */
export const serializersOnFirstUse: SerializerFactory = (externalSchemas, options) => {
  let compile: RouteCompiler<(data: unknown) => string> | undefined;
  const build = (route: unknown) => {
    if (!compile) {
      const { SerializerSelector } = fastifyRequire(
        '@fastify/fast-json-stringify-compiler',
      ) as typeof import('@fastify/fast-json-stringify-compiler');
      compile = SerializerSelector()(externalSchemas, options) as RouteCompiler<(data: unknown) => string>;
    }
    return compile(route);
  };
  return (route) => {
    let fn: ((data: unknown) => string) | undefined;
    return (data: unknown) => (fn ??= build(route))(data);
  };
};
