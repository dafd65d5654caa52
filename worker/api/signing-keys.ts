import { createRoute, z } from '@hono/zod-openapi';
import { requireAdmin } from '../auth/api-auth';
import { signingKeysObject, type PublishedKey } from '../durable/signing-keys/signing-keys';
import { forgetKeySet } from '../oauth/signing-keys';
import { bodyContent, bodyOf, boolParam } from './params';
import { createApiRouter } from './router';

/** Knock's addition (GitLab keeps its OpenID Connect key in its configuration): the keys that sign id_tokens. */
const SigningKeySchema = z
  .object({
    kid: z.string(),
    signs_from: z.string(),
    published_until: z.string().nullable(),
  })
  .openapi('SigningKey');

const RotateSchema = z
  .object({
    withdraw: boolParam()
      .default(false)
      .openapi({ description: 'Remove every earlier key from the JWKS at once (after a leak): what they signed stops verifying.' }),
  })
  .openapi('RotateSigningKeys');

const present = (k: PublishedKey): z.infer<typeof SigningKeySchema> => ({
  kid: k.kid,
  signs_from: new Date(k.signsFrom).toISOString(),
  published_until: k.publishedUntil === null ? null : new Date(k.publishedUntil).toISOString(),
});

const rotate = createRoute({
  method: 'post',
  path: '/rotate',
  summary: 'Rotate the id_token signing keys now (administrators only): a new key signs from now',
  request: { body: bodyContent(RotateSchema) },
  responses: {
    201: { description: 'The published keys after the rotation, oldest first', content: { 'application/json': { schema: z.array(SigningKeySchema) } } },
  },
});

export const signingKeys = createApiRouter();
signingKeys.use('*', requireAdmin);
signingKeys.openapi(rotate, async (c) => {
  const keys = await signingKeysObject(c.env).rotateNow(bodyOf(c, RotateSchema).withdraw);
  forgetKeySet();
  return c.json(keys.map(present), 201);
});
