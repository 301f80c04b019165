/**
 * Password hashing: argon2id with OWASP's minimum (m = 19 MiB, t = 2, p = 1) via @node-rs/argon2 (prebuilt).
 * New passwords must pass `passwordPolicyProblem` (12 characters, 5 different ones); stored ones are not re-checked.
 * `verifyDummy` spends the same time for an unknown user so a login does not reveal whether the user exists.
 */

// The native library loads at the first hash or verify (a first start's admin user, a login), not at service start.
const argon2 = () => import('@node-rs/argon2');

/** The argon2id parameters every hash uses (also those a service hashes in a child process: src/agent/initial-hash.ts). */
export const ARGON2_PARAMS = { algorithm: 2 /* Argon2id */, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
let dummyHash: Promise<string> | undefined;

export type PasswordHasher = (password: string) => Promise<string>;

export async function hashPassword(password: string): Promise<string> {
  return (await argon2()).hash(password, ARGON2_PARAMS);
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  const { verify } = await argon2();
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

export async function verifyDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('dummy-password-for-timing');
  await verifyPassword(await dummyHash, password);
  return false;
}

export const MIN_PASSWORD_LENGTH = 12;
export const MIN_DISTINCT_CHARACTERS = 5;

/** Why a new password is refused (security §19), or undefined when it is acceptable. */
export function passwordPolicyProblem(password: string): string | undefined {
  if ([...password].length < MIN_PASSWORD_LENGTH) return `a password needs at least ${MIN_PASSWORD_LENGTH} characters`;
  if (new Set(password).size < MIN_DISTINCT_CHARACTERS) {
    return `a password needs at least ${MIN_DISTINCT_CHARACTERS} different characters`;
  }
  return undefined;
}
