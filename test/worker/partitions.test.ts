import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { fnv1a, MAX_PARTITIONS, partitionCount, partitionOfId, partitionOfName } from '../../worker/durable/partitions';
import { checkPartitionCount } from '../../worker/middleware/partition-count';
import app from '../../worker';
import { ApiError } from '../../worker/errors';
import { directory } from '../../worker/durable/directory/directory';

describe('a Worker started with another partition count than its data was written with', () => {
  it('answers every route 503 saying so, and serves again once the count is set back', async () => {
    const get = async (count: string) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(new Request('https://knock.test/api/v4/user'), { ...env, DIRECTORY_PARTITIONS: count }, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    };
    await checkPartitionCount(env);
    const refused = await get('16');
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({
      message:
        "503 Service Unavailable: DIRECTORY_PARTITIONS is 16 but this deployment's data is in 64 partitions; moving data between partitions is not supported, so set it back to 64",
    });
    // Set back: the request goes on to authentication.
    expect((await get('64')).status).toBe(401);
  });
});

describe('partitions', () => {
  it('hashes names with FNV-1a, whatever their case, so a name never moves', () => {
    // The published FNV-1a 32-bit test vectors.
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    expect(fnv1a('foobar')).toBe(0xbf9cf968);
    expect(partitionOfName('Alice', 64)).toBe(partitionOfName('alice', 64));
    expect(partitionOfName('alice', 64)).toBe(fnv1a('alice') % 64);
  });

  it('spreads ids over every partition', () => {
    expect(new Set(Array.from({ length: 128 }, (_, id) => partitionOfId(id, 64))).size).toBe(64);
  });

  it('reads DIRECTORY_PARTITIONS, and refuses one that is not a count', () => {
    expect(partitionCount({ ...env, DIRECTORY_PARTITIONS: '8' })).toBe(8);
    for (const bad of ['0', '-4', '2.5', 'many', String(MAX_PARTITIONS + 1)]) {
      expect(() => partitionCount({ ...env, DIRECTORY_PARTITIONS: bad })).toThrow(/DIRECTORY_PARTITIONS must be a whole number/);
    }
  });

  it('records the count a deployment starts with and refuses another with 503', async () => {
    await checkPartitionCount(env);
    expect(await directory(env).recordPartitionCount(Number(env.DIRECTORY_PARTITIONS))).toBe(Number(env.DIRECTORY_PARTITIONS));
    const changed = { ...env, DIRECTORY_PARTITIONS: '32' };
    const refusal = await checkPartitionCount(changed).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ status: 503 });
    expect(String(refusal)).toContain('DIRECTORY_PARTITIONS is 32 but this deployment\'s data is in 64 partitions');
    // The refusal recorded nothing: the original count still works.
    await checkPartitionCount(env);
  });
});
