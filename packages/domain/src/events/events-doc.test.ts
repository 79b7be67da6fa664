import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from './catalogue.ts';
import { renderEventsDoc } from './events-doc.ts';

describe('docs/events.md', () => {
  it('is what the catalogue renders: every event type with its JSON Schema (run packages/domain/scripts/write-events-doc.ts)', () => {
    const committed = readFileSync(new URL('../../../../docs/events.md', import.meta.url), 'utf8');
    expect(committed, 'docs/events.md drifted from the catalogue: node --import tsx packages/domain/scripts/write-events-doc.ts').toBe(
      renderEventsDoc(),
    );
    for (const type of EVENT_TYPES) expect(committed).toContain(`### ${type}\n`);
  });
});
