import type { ComponentChildren } from 'preact';
import type { PendingSource } from '../lib/pending-requests';

/** The requests for one group or project, under its name. */
export function SourceSection({ source, children }: { source: PendingSource; children: ComponentChildren }) {
  const headingId = `source-${source.kind}-${source.id}`;
  return (
    <section class="source" aria-labelledby={headingId}>
      <h2 id={headingId}>
        <span class="kind">{source.kind === 'group' ? 'Group' : 'Project'}</span> {source.title}
        <span class="path">{source.fullPath}</span>
      </h2>
      <ul class="requests">{children}</ul>
    </section>
  );
}
