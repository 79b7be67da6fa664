// Child process of `pnpm bench:sub-link`: the customer surface (apps/portal-api, as its
// deployable mounts it) over PostgreSQL in the schema BENCH_SCHEMA, with one subscription
// granted 10 inbounds on 5 nodes (1,000 of them, BENCH_SUBSCRIPTIONS), made through the domain
// use cases. Sends the base URL and the links' paths.
import { randomBytes } from 'node:crypto';
import { connectDatabase } from '@svc/db';
import {
  CreateAccessGroupInput,
  CreateClientInput,
  CreateInboundInput,
  CreateInboundProfileInput,
  CreateNodeInput,
  CreateSubscriptionInput,
  createAccessGroup,
  createClient,
  createInbound,
  createInboundProfile,
  createNode,
  createSubscription,
  parseInput,
  SYSTEM,
  UpdateSubLinkSettingsInput,
  updateSubLinkSettings,
  withActor,
} from '@svc/domain';
import { createHttpService } from '@svc/http';
import { createPortalApi } from '@svc/portal-api';
import { createRuntime } from '@svc/runtime';
import { answerParent } from '../common/children.ts';
import { childConfig } from '../common/server-child.ts';

const config = childConfig({ SVC_INSTALLATION_KEY: randomBytes(32).toString('base64') });
const database = await connectDatabase({ url: config.database.url, dataDir: config.data_dir, schema: process.env.BENCH_SCHEMA });
const rt = await createRuntime(config, { database });
const ctx = withActor(rt.deps, SYSTEM);

const profiles = [
  {
    name: 'vless-reality',
    protocol: 'vless' as const,
    vless_flow: 'xtls-rprx-vision',
    stream: {
      network: 'tcp' as const,
      security: 'reality' as const,
      reality: { dest: 'www.example.com:443', server_names: ['www.example.com'] },
    },
  },
  { name: 'vmess-ws', protocol: 'vmess' as const, stream: { network: 'ws' as const, security: 'none' as const, ws: { path: '/vm' } } },
];
const inboundIds: string[] = [];
const made = await Promise.all(profiles.map((p) => createInboundProfile(ctx, parseInput(CreateInboundProfileInput, p))));
for (let k = 0; k < 5; k++) {
  const node = await createNode(ctx, parseInput(CreateNodeInput, { name: `bench-node-${k}`, address: `n${k}.example.net` }));
  for (const [i, p] of made.entries())
    inboundIds.push((await createInbound(ctx, parseInput(CreateInboundInput, { node_id: node.id, profile_id: p.id, port: 443 + i }))).id);
}
const group = await createAccessGroup(ctx, parseInput(CreateAccessGroupInput, { name: 'bench-all', inbound_ids: inboundIds }));
const client = await createClient(ctx, parseInput(CreateClientInput, { email: 'bench-sub@example.com' }));
// Many subscriptions, so the load asks for a different link each time (as real apps do).
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 1000);
const links: string[] = [];
for (let i = 0; i < SUBSCRIPTIONS; i++) {
  const sub = await createSubscription(
    ctx,
    parseInput(CreateSubscriptionInput, { client_id: client.id, access_group_ids: [group.id], traffic_limit_bytes: 100_000_000_000 }),
  );
  links.push(sub.link);
}

// BENCH_FORMAT_RULES (JSON): the User-Agent rules to serve with (bench:ua-rules).
if (process.env.BENCH_FORMAT_RULES)
  await updateSubLinkSettings(ctx, parseInput(UpdateSubLinkSettingsInput, { format_rules: JSON.parse(process.env.BENCH_FORMAT_RULES) }));

const portal = createPortalApi();
const http = createHttpService(rt.deps, (root) => root.route('/', portal.routes));
const { url } = await http.start();
const paths = links.map((l) => `/sub/${l.split('/sub/')[1] as string}`);
answerParent({ url, paths, inbounds: inboundIds.length, database: rt.database.location }, async () => {
  await http.stop();
  await portal.stop();
  await rt.close();
  await database.destroy();
});
