declare namespace Cloudflare {
  interface Env extends import('../../worker/env').Env {}
  interface GlobalProps {
    mainModule: typeof import('../../worker/index');
    durableNamespaces: 'Directory' | 'Grants' | 'Namespace';
  }
}
