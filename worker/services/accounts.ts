import type { z } from '@hono/zod-openapi';
import type { NewUserSchema } from '../api/users';
import { hashPassword } from '../auth/crypto';
import { directory, type UserRow } from '../durable/directory';
import type { Result } from '../durable/result';
import type { Env } from '../env';

/**
 * A new user with a password, as the sign-up page and the administrators' console make one: the
 * password stored with PBKDF2, then the Directory's rules (a username or email taken is a 409).
 */
export const createAccount = async (env: Env, input: z.output<typeof NewUserSchema>): Promise<Result<UserRow>> =>
  directory(env).createUser({
    username: input.username,
    name: input.name,
    email: input.email ?? null,
    passwordHash: await hashPassword(input.password),
    admin: input.admin ?? false,
  });
