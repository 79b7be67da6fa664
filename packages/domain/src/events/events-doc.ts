import { EVENT_TYPES, EVENT_VERSION, type EventType, eventDataJsonSchema, eventDescription } from './catalogue.ts';

const GROUPS: Array<{ prefix: string; title: string }> = [
  { prefix: 'subscription.', title: 'Subscriptions' },
  { prefix: 'client.', title: 'Clients' },
  { prefix: 'node.', title: 'Nodes' },
  { prefix: 'certificate.', title: 'Certificates' },
  { prefix: 'payment.', title: 'Payments' },
  { prefix: 'admin.', title: 'Admins and API tokens' },
  { prefix: 'api_token.', title: 'Admins and API tokens' },
];

const INTRO = `# Events

<!-- Generated from packages/domain/src/events/catalogue.ts by
     \`node --import tsx packages/domain/scripts/write-events-doc.ts\`; a test fails when it drifts. -->

Everything the control plane can tell an operator's systems about, one entry per event type:
when it is raised, its version, and the JSON Schema (draft 2020-12) of its \`data\`. The same
catalogue is the \`webhooks\` section of the admin API's OpenAPI 3.1 document
(\`GET /api/v1/openapi.json\`, browsable at \`/api/v1/docs\`). How events travel (the outbox,
mails, retries) is [docs/notifications.md](notifications.md).

## The envelope

Each webhook delivery is one POST with a JSON body and a signature header:

\`\`\`json
{ "id": "evt_…", "type": "subscription.limited", "version": 1, "occurred_at": "2026-11-30T10:00:00.000Z", "data": { … } }
\`\`\`

- \`id\` is the event's: deliveries are **at least once** (a receiver that answered late, or a
  worker that crashed after sending, sees it again), so a receiver skips an \`id\` it has seen.
- \`version\` is the version of \`data\` for that type. A field added keeps the version (read
  what you know, ignore the rest); a field removed, renamed or changed in meaning makes the
  next version, announced in the release notes.
- \`X-Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>\`, the
  endpoint's secret (shown once when the endpoint is created); verify it on the raw bytes and
  refuse a \`t\` older than five minutes (docs/notifications.md, "Verifying a delivery").
- Any 2xx acknowledges; anything else (or no answer within 10 s) is retried with backoff.

An endpoint receives the types it subscribed to (\`event_types\`, a list from this catalogue),
or every type, today's and future ones (\`event_types: null\`). An event is raised once for its
cause, in the transaction that made the change: a change that rolled back raised nothing, and a
change applied again that changes nothing raises nothing.
`;

/** docs/events.md, from the catalogue (the schemas and their descriptions). */
export function renderEventsDoc(): string {
  const parts = [INTRO];
  const titles = [...new Set(GROUPS.map((g) => g.title))];
  for (const title of titles) {
    const prefixes = GROUPS.filter((g) => g.title === title).map((g) => g.prefix);
    const types = EVENT_TYPES.filter((t) => prefixes.some((p) => t.startsWith(p)));
    parts.push(
      `## ${title}\n\n| type | when |\n|---|---|\n${types.map((t) => `| [\`${t}\`](#${anchor(t)}) | ${firstSentence(t)} |`).join('\n')}\n`,
    );
    for (const type of types) parts.push(section(type));
  }
  const grouped = new Set(GROUPS.flatMap((g) => EVENT_TYPES.filter((t) => t.startsWith(g.prefix))));
  const stray = EVENT_TYPES.filter((t) => !grouped.has(t));
  if (stray.length > 0) throw new Error(`event types in no group of events-doc.ts: ${stray.join(', ')}`);
  return `${parts.join('\n').trimEnd()}\n`;
}

function section(type: EventType): string {
  const schema = { ...eventDataJsonSchema(type) };
  delete schema.$schema;
  delete schema.description;
  return `### ${type}\n\n${eventDescription(type)}\n\nVersion ${EVENT_VERSION[type]}. \`data\`:\n\n\`\`\`json\n${JSON.stringify(schema, null, 2)}\n\`\`\`\n`;
}

const anchor = (type: EventType) => type.replace(/[^a-z0-9_-]/g, '');
const firstSentence = (type: EventType) => {
  const d = eventDescription(type);
  const end = d.search(/[.:;](\s|$)/);
  return (end > 0 ? d.slice(0, end + 1) : d).replaceAll('|', '\\|');
};
