import { raise, type Problem } from '../errors';

/** What a Durable Object returns across RPC: a value, or the error a client is to see. */
export type Result<T> = { ok: true; value: T } | { ok: false; problem: Problem };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = <T = never>(problem: Problem): Result<T> => ({ ok: false, problem });

/** The value, or the Result's error raised for `renderError` to show. */
export const unwrap = <T>(result: Result<T>): T => (result.ok ? result.value : raise(result.problem));
