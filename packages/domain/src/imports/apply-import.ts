import type { Db } from '@svc/db';
import { ValidationError } from '../errors.ts';
import { bumpNodeRevisions, nodesOfAccessGroups } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { newId } from '../shared/ids.ts';
import { type UnitOfWork, unitOfWork } from '../shared/unit-of-work.ts';
import { setSubscriptionGroups } from '../subscriptions/access-groups.ts';
import { newCredentials } from '../subscriptions/credentials.ts';
import { subscriptionStatus } from '../subscriptions/subscription-status.ts';
import type { ImportBatch, ImportedUser, ImportNotCarried } from './import-batch.ts';
import { assertCertificate, importSourceInbounds, targetNodes } from './import-inbounds.ts';
import type { ImportedUserOutcome, ImportReport } from './import-report.ts';
import { importedClientEmail } from './imported-client-email.ts';

export interface ImportOptions {
  /** The operator's name for the source (default: its kind): a re-import under it updates what it made. */
  sourceName?: string;
  /** Everything decided and reported, nothing written. */
  dryRun?: boolean;
  /** Nodes (ids or names) each source inbound is bound on, at its port. */
  nodes?: readonly string[];
  /** The certificate (id) the source's TLS inbounds serve with here. */
  tlsCertificateId?: string | null;
  /** Told after each user (how many of how many): an import job's progress. */
  onProgress?: (done: number, total: number) => void;
}

export const SOURCE_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** Thrown inside the unit to roll a dry run back with its report. */
class DryRun extends Error {
  constructor(readonly report: ImportReport) {
    super('dry run');
  }
}

/**
 * `svc import` (issue 34, docs/import.md): the users another panel held become clients and
 * subscriptions here, in one transaction. Their proxy credentials are the source's, verbatim
 * (the links their devices hold keep working); limits, usage, expiry, renewal, state and notes
 * are the source's; each source inbound is an access group its users are in. Idempotent: a
 * second import of the same source name updates every subscription it made and creates only
 * what is new. A dry run decides and reports everything and writes nothing.
 */
export async function applyImport(ctx: DomainContext, batch: ImportBatch, options: ImportOptions = {}): Promise<ImportReport> {
  const name = options.sourceName ?? batch.source;
  if (!SOURCE_NAME.test(name))
    throw new ValidationError('invalid source name', { source_name: 'lower-case letters, digits, . _ -, at most 63 characters' });
  try {
    return await unitOfWork(ctx, async (uow) => {
      const report = await importInUnit(ctx, uow, batch, name, options);
      if (options.dryRun) throw new DryRun(report);
      return report;
    });
  } catch (err) {
    if (err instanceof DryRun) return err.report;
    throw err;
  }
}

async function importInUnit(
  ctx: DomainContext,
  uow: UnitOfWork,
  batch: ImportBatch,
  name: string,
  options: ImportOptions,
): Promise<ImportReport> {
  const trx = uow.db;
  const now = ctx.clock.now();
  const notCarried: ImportNotCarried[] = [...batch.notCarried];
  const nodes = await targetNodes(trx, options.nodes ?? []);
  const tlsCertificateId = options.tlsCertificateId ?? null;
  await assertCertificate(trx, tlsCertificateId);

  const existing = await trx.selectFrom('import_sources').selectAll().where('name', '=', name).forUpdate().executeTakeFirst();
  if (existing && existing.kind !== batch.source)
    throw new ValidationError(`source "${name}" was imported from ${existing.kind}, not ${batch.source}`, {
      source_name: 'taken by another kind of source',
    });
  const sourceId = existing?.id ?? newId('imp', now.getTime());
  const secret = batch.linkSecret ? ctx.secrets.seal(batch.linkSecret) : null;
  if (existing)
    await trx
      .updateTable('import_sources')
      .set({ link_secret_enc: secret ?? existing.link_secret_enc, source_version: batch.sourceVersion, last_imported_at: now })
      .where('id', '=', sourceId)
      .execute();
  else
    await trx
      .insertInto('import_sources')
      .values({
        id: sourceId,
        kind: batch.source,
        name,
        link_secret_enc: secret,
        source_version: batch.sourceVersion,
        first_imported_at: now,
        last_imported_at: now,
      })
      .execute();

  const inbounds = await importSourceInbounds(ctx, uow, sourceId, name, batch, nodes, tlsCertificateId, notCarried);
  const groups = { ids: inbounds.groupIds };
  const known = new Map(
    (
      await trx
        .selectFrom('imported_users')
        .select(['source_key', 'subscription_id', 'links_retired_at'])
        .where('source_id', '=', sourceId)
        .execute()
    ).map((r) => [r.source_key, { id: r.subscription_id, retired: r.links_retired_at !== null }]),
  );
  const outcomes: ImportedUserOutcome[] = [];
  const seen = new Set<string>();
  const links = new Set<string>();
  for (const [index, given] of batch.users.entries()) {
    options.onProgress?.(index, batch.users.length);
    const user = { ...given };
    if (seen.has(user.key)) {
      notCarried.push({
        what: `user ${user.username}`,
        why: 'a second user with the same name (names are case-insensitive at the source)',
      });
      continue;
    }
    seen.add(user.key);
    if (user.linkKey !== null) {
      if (links.has(user.linkKey)) {
        notCarried.push({
          what: `user ${user.username}: link`,
          why: `another user has the same link key ${user.linkKey}: their old link opens the first one only`,
        });
        user.linkKey = null;
      } else links.add(user.linkKey);
    }
    const terms = termsOf(user, notCarried);
    const groupIds = [...new Set(user.inboundTags.flatMap((t) => (groups.ids.has(t) ? [groups.ids.get(t) as string] : [])))].sort();
    const mine = known.get(user.key);
    const outcome = mine
      ? await updateImported(trx, sourceId, mine.id, mine.retired, user, terms, [...groups.ids.values()], groupIds, now)
      : await createImported(ctx, trx, sourceId, name, user, terms, groupIds, now);
    outcomes.push({ ...outcome, access_groups: user.inboundTags.filter((t) => groups.ids.has(t)).sort() });
  }

  const bumped = await bumpNodeRevisions(uow, await nodesOfAccessGroups(trx, [...groups.ids.values()]));
  const counts = {
    users_created: outcomes.filter((o) => o.action === 'create').length,
    users_updated: outcomes.filter((o) => o.action === 'update').length,
    ...inbounds.counts,
  };
  uow.audit({
    action: 'import.applied',
    entity_type: 'import_source',
    entity_id: sourceId,
    details: {
      kind: batch.source,
      name,
      source_version: batch.sourceVersion,
      ...counts,
      not_carried: notCarried.length,
      nodes_bumped: bumped,
    },
  });
  return {
    dry_run: options.dryRun === true,
    source: { kind: batch.source, name, version: batch.sourceVersion, links_verifiable: batch.linkSecret !== null },
    counts,
    users: outcomes,
    inbounds: inbounds.outcomes,
    not_carried: notCarried,
  };
}

interface Terms {
  renewal: 'no_reset' | 'day' | 'week' | 'month';
  expiresAt: Date | null;
  /** A term that starts on first use (expiresAt null meanwhile), and its latest start. */
  startsOnFirstUseSeconds: number | null;
  startBy: Date | null;
  adminDisabled: boolean;
}

/** The subscription's terms from the source user's: what has no counterpart here is said in `notCarried`. */
function termsOf(user: ImportedUser, notCarried: ImportNotCarried[]): Terms {
  let renewal: Terms['renewal'] = 'no_reset';
  if (user.renewal === 'year')
    notCarried.push({ what: `user ${user.username}: renewal`, why: 'a yearly reset has no counterpart here: imported without resets' });
  else renewal = user.renewal;
  // On hold: the term starts with the first traffic, or at the source's latest start (start-on-first-use.ts).
  if (user.onHold && user.onHold.durationSeconds > 0)
    return {
      renewal,
      expiresAt: null,
      startsOnFirstUseSeconds: user.onHold.durationSeconds,
      startBy: user.onHold.startsBy,
      adminDisabled: false,
    };
  if (user.onHold) notCarried.push({ what: `user ${user.username}: on hold`, why: 'a term of no length: imported without an expiry' });
  return {
    renewal,
    expiresAt: user.onHold ? null : user.expiresAt,
    startsOnFirstUseSeconds: null,
    startBy: null,
    adminDisabled: user.status === 'disabled',
  };
}

/** The credentials the source holds for the user, verbatim. */
function sourceCredentials(user: ImportedUser) {
  const c = user.credentials;
  return {
    ...(c.vless ? { vless_uuid: c.vless.uuid } : {}),
    ...(c.vmess ? { vmess_uuid: c.vmess.uuid } : {}),
    ...(c.trojan ? { trojan_password: c.trojan.password } : {}),
    ...(c.shadowsocks ? { shadowsocks_password: c.shadowsocks.password } : {}),
  };
}

/** The status rule applied to what the import writes. */
const importedStatus = (user: ImportedUser, terms: Terms, usedBytes: number, now: Date) =>
  subscriptionStatus(
    {
      admin_disabled: terms.adminDisabled,
      used_bytes: usedBytes,
      traffic_limit_bytes: user.trafficLimitBytes,
      expires_at: terms.expiresAt,
    },
    now,
  );

function usageOf(user: ImportedUser) {
  return {
    used_bytes: user.usedBytes,
    // The sources count one total (Marzban shows it as download): so is it here.
    period_uplink_bytes: 0,
    period_downlink_bytes: user.usedBytes,
    lifetime_used_bytes: Math.max(user.lifetimeUsedBytes, user.usedBytes),
  };
}

async function createImported(
  ctx: DomainContext,
  trx: Db,
  sourceId: string,
  sourceName: string,
  user: ImportedUser,
  terms: Terms,
  groupIds: string[],
  now: Date,
): Promise<Omit<ImportedUserOutcome, 'access_groups'>> {
  let email = user.email;
  if (!email || (await trx.selectFrom('clients').select('id').where('email', '=', email).executeTakeFirst())) {
    for (let n = 0; ; n++) {
      email = importedClientEmail(sourceName, user.username, n);
      if (!(await trx.selectFrom('clients').select('id').where('email', '=', email).executeTakeFirst())) break;
    }
  }
  const clientId = newId('cli', now.getTime());
  await trx
    .insertInto('clients')
    .values({
      id: clientId,
      email,
      password_hash: null,
      email_verified_at: null,
      status: 'active',
      note: `Imported from ${user.username} of ${sourceName}`,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const { credentials } = newCredentials(ctx.secrets);
  const usage = usageOf(user);
  const status = importedStatus(user, terms, usage.used_bytes, now);
  const id = newId('sub', now.getTime());
  await trx
    .insertInto('subscriptions')
    .values({
      id,
      client_id: clientId,
      status,
      traffic_limit_bytes: user.trafficLimitBytes,
      expires_at: terms.expiresAt,
      starts_on_first_use_seconds: terms.startsOnFirstUseSeconds,
      start_by: terms.startBy,
      renewal: terms.renewal,
      period_started_at: now,
      // Fresh credentials and link token, then the source's credentials over them: a protocol the
      // source gave the user none of keeps the fresh one (no link of theirs carried it).
      ...credentials,
      ...sourceCredentials(user),
      credentials_rotated_at: null,
      plan_id: null,
      note: user.note,
      created_at: now,
      updated_at: now,
    })
    .execute();
  // Its counters row (the insert's trigger added it at 0) takes the source's usage.
  await trx.updateTable('subscription_counters').set(usage).where('subscription_id', '=', id).execute();
  await setSubscriptionGroups(trx, id, groupIds);
  await trx
    .insertInto('imported_users')
    .values({
      source_id: sourceId,
      source_key: user.key,
      username: user.username,
      link_key: user.linkKey,
      subscription_id: id,
      source_created_at: user.createdAt,
      links_revoked_at: user.linksRevokedAt,
      links_retired_at: null,
      imported_at: now,
    })
    .execute();
  return { username: user.username, action: 'create', subscription_id: id, client_email: email, status };
}

async function updateImported(
  trx: Db,
  sourceId: string,
  subscriptionId: string,
  /** Its link was rotated here since the import: the source's credentials are not put back. */
  retired: boolean,
  user: ImportedUser,
  terms: Terms,
  /** Every group standing for an inbound of this source: the ones the import manages. */
  sourceGroupIds: string[],
  groupIds: string[],
  now: Date,
): Promise<Omit<ImportedUserOutcome, 'access_groups'>> {
  const usage = usageOf(user);
  const current = await trx
    .selectFrom('subscriptions')
    .select(['expires_at', 'starts_on_first_use_seconds'])
    .where('id', '=', subscriptionId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  // A term that already started here (first use since the import) is not put on hold again.
  if (terms.startsOnFirstUseSeconds !== null && current.starts_on_first_use_seconds === null && current.expires_at !== null)
    terms = { ...terms, expiresAt: current.expires_at, startsOnFirstUseSeconds: null, startBy: null };
  const status = importedStatus(user, terms, usage.used_bytes, now);
  const row = await trx
    .updateTable('subscriptions')
    .set({
      status,
      traffic_limit_bytes: user.trafficLimitBytes,
      expires_at: terms.expiresAt,
      starts_on_first_use_seconds: terms.startsOnFirstUseSeconds,
      start_by: terms.startBy,
      renewal: terms.renewal,
      // Only what the source holds: a credential it gave the user none of stays as it is here.
      ...(retired ? {} : sourceCredentials(user)),
      note: user.note,
      updated_at: now,
    })
    .where('id', '=', subscriptionId)
    .returning('client_id')
    .executeTakeFirstOrThrow();
  await trx.updateTable('subscription_counters').set(usage).where('subscription_id', '=', subscriptionId).execute();
  // The source's groups follow the source; groups an operator added since stay.
  if (sourceGroupIds.length > 0)
    await trx
      .deleteFrom('subscription_access_groups')
      .where('subscription_id', '=', subscriptionId)
      .where('access_group_id', 'in', sourceGroupIds)
      .execute();
  if (groupIds.length > 0)
    await trx
      .insertInto('subscription_access_groups')
      .values(groupIds.map((access_group_id) => ({ subscription_id: subscriptionId, access_group_id })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  await trx
    .updateTable('imported_users')
    .set({
      username: user.username,
      link_key: user.linkKey,
      source_created_at: user.createdAt,
      links_revoked_at: user.linksRevokedAt,
      imported_at: now,
    })
    .where('source_id', '=', sourceId)
    .where('source_key', '=', user.key)
    .execute();
  const client = await trx.selectFrom('clients').select('email').where('id', '=', row.client_id).executeTakeFirstOrThrow();
  return { username: user.username, action: 'update', subscription_id: subscriptionId, client_email: client.email, status };
}
