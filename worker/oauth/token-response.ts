/** The token endpoint's success body is shared with the extension (contract §5, RFC 6749 §5.1). */
export type { TokenResponse } from '../../shared/api-types';

/** RFC 6749 §5.1: responses carrying tokens (and their errors) must not be cached. */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;
