import { writeFileSync } from 'node:fs';
import { renderEventsDoc } from '../src/events/events-doc.ts';

// docs/events.md from the event catalogue (packages/domain/src/events/catalogue.ts).
const target = new URL('../../../docs/events.md', import.meta.url);
writeFileSync(target, renderEventsDoc());
console.log(`wrote ${target.pathname}`);
