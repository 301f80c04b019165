/** User administration (admin only), shared by both services (the same routes, PATCH included, on each). */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../http/error-handler.js';
import { GROUPS, type UserInput, type UserService } from './users.service.js';

const UserOut = Type.Object({
  username: Type.String(),
  fullname: Type.String(),
  email: Type.String(),
  group: Type.String({ enum: ['admin', 'user', 'readonly'] }),
  enabled: Type.String({ enum: ['true', 'false'] }),
  createdMs: Type.Number(),
  updatedMs: Type.Number(),
});
const fields = {
  password: Type.String({
    description: 'at least 12 characters, 5 of them different; write-only',
    maxLength: 1024,
    writeOnly: true,
    example: 'a-long-passphrase-42',
  }),
  fullname: Type.String({ maxLength: 200 }),
  email: Type.String({ maxLength: 320 }),
  group: Type.String({ enum: [...GROUPS], description: 'any case' }),
  enabled: Type.String({ enum: ['true', 'false'] }),
};
const CreateUser = Type.Object(
  { username: Type.String({ maxLength: 64, example: 'jane' }), ...fields },
  { additionalProperties: false, required: ['username', 'password'] },
);
const PatchUser = Type.Object(
  {
    username: Type.String({ maxLength: 64 }),
    ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])),
  },
  { additionalProperties: false },
);
const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA, 409: ERROR_SCHEMA };

export function registerUserRoutes(app: FastifyInstance, deps: { users: UserService }): void {
  const { users } = deps;
  const tags = ['users'];
  app.get(
    '/api/users',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'All users (passwords never returned)',
        security: sec,
        response: { 200: Type.Array(UserOut), ...errs },
      },
    },
    async () => users.list(),
  );

  app.post<{ Body: UserInput }>(
    '/api/users',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Create a user (409 when the name exists)',
        security: sec,
        body: { ...CreateUser, required: ['username', 'password'] },
        response: { 201: UserOut, ...errs },
      },
    },
    async (req, reply) => reply.code(201).send(await users.create(req.body)),
  );

  app.patch<{ Body: UserInput }>(
    '/api/users',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          "Update a user: username plus the fields to change. A password, group or enabled change ends the user's existing tokens.",
        security: sec,
        body: { ...PatchUser, required: ['username'] },
        response: { 200: UserOut, ...errs },
      },
    },
    async (req) => users.update(req.body),
  );

  app.delete<{ Params: { username: string } }>(
    '/api/users/:username',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Delete a user; its tokens stop working at once, also if a user of the same name is created again',
        security: sec,
        params: Type.Object({ username: Type.String({ maxLength: 64 }) }),
        response: { 200: Type.Object({ code: Type.Integer(), message: Type.String() }), ...errs },
      },
    },
    async (req) => {
      await users.remove(req.params.username);
      return { code: 200, message: `user ${req.params.username} deleted` };
    },
  );
}
