import type { ComponentChildren } from 'preact';
import type { PendingSource } from '../lib/pending-requests';

/** The requests for one group or project, under its name. */
export function SourceSection({ serverUrl, source, children }: { serverUrl: string; source: PendingSource; children: ComponentChildren }) {
  const headingId = `source-${new URL(serverUrl).host}-${source.kind}-${source.id}`.replace(/[^\w-]/g, '-');
  return (
    <section class="source" aria-labelledby={headingId}>
      <h3 id={headingId}>
        <span class="kind">{source.kind === 'group' ? 'Group' : 'Project'}</span> {source.title}
        <span class="path">{source.fullPath}</span>
      </h3>
      <ul class="requests">{children}</ul>
    </section>
  );
}
